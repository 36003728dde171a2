/* SPDX-License-Identifier: MIT */
/* hash.h: SHA-256 through OpenSSL EVP, as lowercase hex. */
#ifndef PROCTOR_HASH_H
#define PROCTOR_HASH_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

struct sha256 {
	void *ctx; /* EVP_MD_CTX */
};

/* Loads libcrypto on the first call: -ELIBACC / -ELIBBAD (dynlib.h) when it cannot. */
int sha256_init(struct sha256 *h);
int sha256_update(struct sha256 *h, const void *p, size_t n);
/* Finish into out[SHA256_HEX_LEN + 1] and free the context. */
int sha256_final_hex(struct sha256 *h, char *out);
void sha256_free(struct sha256 *h);
/* One-shot. 0, -EIO, or -ELIBACC / -ELIBBAD when libcrypto cannot be loaded. */
int sha256_hex(const void *p, size_t n, char *out);

#endif
