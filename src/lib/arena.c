/* SPDX-License-Identifier: MIT */
/* arena.c: 1 MiB chunks; an allocation larger than a quarter chunk gets a chunk of its own, so
 * big strings waste nothing and small ones cost no malloc header each. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK_BYTES (1024u * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

void arena_init(struct arena *a)
{
	a->head = NULL;
	a->bytes = 0;
}

void arena_free(struct arena *a)
{
	while (a->head) {
		struct arena_chunk *c = a->head;

		a->head = c->next;
		free(c);
	}
	a->bytes = 0;
}

static struct arena_chunk *chunk_new(size_t cap)
{
	struct arena_chunk *c = malloc(sizeof(*c) + cap);

	if (!c)
		return NULL;
	c->next = NULL;
	c->used = 0;
	c->cap = cap;
	return c;
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c;
	size_t need = (n + sizeof(void *) - 1) & ~(sizeof(void *) - 1);

	if (n > SIZE_MAX / 2)
		return NULL;
	if (need > ARENA_CHUNK_BYTES / 4) {
		/* A chunk of its own, kept behind the head so the head keeps filling. */
		c = chunk_new(need);
		if (!c)
			return NULL;
		c->used = need;
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			a->head = c;
		}
		a->bytes += need;
		return c->data;
	}
	if (!a->head || a->head->cap - a->head->used < need) {
		c = chunk_new(ARENA_CHUNK_BYTES);
		if (!c)
			return NULL;
		c->next = a->head;
		a->head = c;
	}
	c = a->head;
	c->used += need;
	a->bytes += need;
	return (char *)c->data + c->used - need;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
