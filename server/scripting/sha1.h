/* sha1.h - SHA-1 (FIPS 180-4) for script names: EVAL keys its cache by the
 * SHA1 of the body, as Redis does. Not for security. */
#ifndef LATCHD_SHA1_H
#define LATCHD_SHA1_H

#include <stddef.h>

#define SHA1_DIGEST_LEN 20

void sha1_digest(const void *data, size_t len, unsigned char out[SHA1_DIGEST_LEN]);

#endif
