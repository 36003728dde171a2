/* SPDX-License-Identifier: MIT */
/* dynlib.c: dlopen a library and resolve a table of functions, all or nothing (see dynlib.h).
 * The once-only logic and the function types stay with each caller (hash.c, priv/drop.c). */
#include "dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

static void syms_clear(const struct dynlib_sym *syms, size_t n)
{
	void *none = NULL;

	for (size_t i = 0; i < n; i++)
		memcpy(syms[i].addr, &none, sizeof(none));
}

int dynlib_open(const char *soname, const struct dynlib_sym *syms, size_t n)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	syms_clear(syms, n);
	if (!h)
		return -ELIBACC;
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(h, syms[i].name);

		if (!p) {
			syms_clear(syms, i);
			dlclose(h);
			return -ELIBBAD;
		}
		/* POSIX guarantees a function's address survives the round trip through void *; the
		 * copy, unlike a cast of the destination, is defined for any function pointer type. */
		memcpy(syms[i].addr, &p, sizeof(p));
	}
	return 0;
}
