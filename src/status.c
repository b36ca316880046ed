#include <emb/status.h>

const char *emb_strerror(emb_status status)
{
    switch (status) {
    case EMB_OK: return "ok";
    case EMB_E_INVALID: return "invalid argument";
    case EMB_E_NOSPACE: return "no space";
    case EMB_E_BUSY: return "busy";
    case EMB_E_STATE: return "not allowed in this state";
    case EMB_E_NOTFOUND: return "not found";
    case EMB_E_IO: return "input/output error";
    case EMB_E_CORRUPT: return "corrupt data";
    }
    return "unknown status";
}
