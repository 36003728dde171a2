/* SPDX-License-Identifier: MIT */
/* hash.c: SHA-256 via OpenSSL's EVP interface (which picks the CPU's SHA extensions). */
#include "hash.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>

int sha256_init(struct sha256 *h)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();

	h->ctx = c;
	if (!c)
		return -ENOMEM;
	return EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 ? 0 : -EIO;
}

int sha256_update(struct sha256 *h, const void *p, size_t n)
{
	return EVP_DigestUpdate(h->ctx, p, n) == 1 ? 0 : -EIO;
}

int sha256_final_hex(struct sha256 *h, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	int r = EVP_DigestFinal_ex(h->ctx, md, &len) == 1 && len == 32 ? 0 : -EIO;

	for (unsigned i = 0; r == 0 && i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	sha256_free(h);
	return r;
}

void sha256_free(struct sha256 *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

int sha256_hex(const void *p, size_t n, char *out)
{
	struct sha256 h;
	int r = sha256_init(&h);

	if (r == 0)
		r = sha256_update(&h, p, n);
	if (r < 0) {
		sha256_free(&h);
		return r;
	}
	return sha256_final_hex(&h, out);
}
