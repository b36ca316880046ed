/* A host program built against the installed native port alone, with
 * `cc pkgconfig_app.c $(pkg-config --cflags --libs emb)`: it records two events and dumps
 * its trace to argv[1], which the installed `emb trace` decodes (test_install.sh). */
#include <emb/native.h>
#include <emb/trace_events.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    emb_native_set_identity("pkgconfig-app 1.0", "via=pkg-config", 42u);
    const struct emb_native_config config = {.mode = EMB_TRACE_MODE_SNAPSHOT};
    if (emb_native_init(&config) != EMB_OK)
        return 1;
    EMB_TRACE_user_event(7, 11, 13);
    EMB_TRACE_user_event(8, 17, 19);
    emb_status s = emb_native_trace_dump(argv[1]);
    emb_native_shutdown();
    return s == EMB_OK ? 0 : 1;
}
