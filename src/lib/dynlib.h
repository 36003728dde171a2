/* SPDX-License-Identifier: MIT */
/* dynlib.h: load a shared library on first use (dlopen) and resolve the functions a caller needs,
 * for libraries that only some commands use (libcrypto: bundle hashing; libcap-ng: the privilege
 * drop), so that a command run on every agent call (`guard hook`) never maps them. */
#ifndef PROCTOR_DYNLIB_H
#define PROCTOR_DYNLIB_H

#include <stddef.h>

/* One function to resolve: its name, and the function pointer to store its address in. */
struct dynlib_sym {
	const char *name;
	void *addr; /* points to the caller's function pointer, e.g. &evp.init */
};

/* dlopen(soname, RTLD_NOW | RTLD_LOCAL), then dlsym every one of syms[0..n). 0 with every pointer
 * set; -ELIBACC when the library cannot be loaded, -ELIBBAD when it lacks one of the symbols (then
 * it is closed again and every pointer is NULL: a caller never holds half a library). The library
 * stays loaded for the life of the process. Not synchronised: callers run it once, under
 * pthread_once(), and check its result before every use. */
int dynlib_open(const char *soname, const struct dynlib_sym *syms, size_t n);

#endif
