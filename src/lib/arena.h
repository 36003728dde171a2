/* SPDX-License-Identifier: MIT */
/* arena.h: bump allocation for data that lives and dies together (a loaded fixture's strings). */
#ifndef PROCTOR_ARENA_H
#define PROCTOR_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
	size_t bytes; /* total allocated, for accounting */
};

void arena_init(struct arena *a);
void arena_free(struct arena *a);
/* Pointer-aligned memory, or NULL on ENOMEM. */
void *arena_alloc(struct arena *a, size_t n);
/* A NUL-terminated copy of n bytes, or NULL on ENOMEM. */
char *arena_strndup(struct arena *a, const char *s, size_t n);

#endif
