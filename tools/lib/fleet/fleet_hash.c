/* The fleet's hashes: SHA-256 (OpenSSL's) of a record's bytes, its identity in the
 * store, and of a signature, whose first 12 hex digits name its bucket. */
#include "fleet.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

void emb_fleet_sha256_hex(const void *bytes, size_t n, char out[EMB_FLEET_HASH_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(bytes, n, md, &len, EVP_sha256(), NULL) != 1)
        len = 0;
    for (unsigned int i = 0; i < len && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    out[2 * (len < 32 ? len : 32)] = '\0';
}

void emb_fleet_bucket_id(const char *signature, char out[EMB_FLEET_BUCKET_HEX])
{
    char full[EMB_FLEET_HASH_HEX];
    emb_fleet_sha256_hex(signature, strlen(signature), full);
    memcpy(out, full, EMB_FLEET_BUCKET_HEX - 1);
    out[EMB_FLEET_BUCKET_HEX - 1] = '\0';
}
