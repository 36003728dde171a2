/* SPDX-License-Identifier: MIT */
/* identity.c: parse /proc/self/status; probe Landlock. */
#include "identity.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/buf.h"
#include "../lib/fd.h"

/* The value of "Key:\t..." at the start of a line, or NULL. */
static const char *field(const char *text, size_t len, const char *key, size_t *ret_len)
{
	size_t kl = strlen(key);

	*ret_len = 0;
	for (const char *p = text; p < text + len;) {
		const char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);

		if (ll > kl && !memcmp(p, key, kl) && p[kl] == ':') {
			const char *v = p + kl + 1;

			while (v < p + ll && (*v == '\t' || *v == ' '))
				v++;
			*ret_len = (size_t)(p + ll - v);
			return v;
		}
		p += ll + 1;
	}
	return NULL;
}

static int parse_ids(const char *v, size_t n, unsigned *out)
{
	char buf[128], *end;
	const char *p = buf;

	if (!v || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	for (int i = 0; i < 4; i++) {
		unsigned long x;

		errno = 0;
		x = strtoul(p, &end, 10);
		if (errno || end == p || x > UINT32_MAX || (*end && *end != '\t' && *end != ' '))
			return -EINVAL;
		out[i] = (unsigned)x;
		p = end;
	}
	while (*p == '\t' || *p == ' ')
		p++;
	return *p ? -EINVAL : 0;
}

static int parse_hex64(const char *v, size_t n, uint64_t *out)
{
	char buf[32], *end;

	if (!v || n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f')))
			return -EINVAL;
	errno = 0;
	*out = strtoull(buf, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

static int parse_small(const char *v, size_t n, int max, int *out)
{
	if (!v || n != 1 || v[0] < '0' || v[0] > '0' + max)
		return -EINVAL;
	*out = v[0] - '0';
	return 0;
}

static int parse_groups(const char *v, size_t n, struct identity *id)
{
	char buf[IDENTITY_MAX_GROUPS * 12], *save = NULL;

	if (!v || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	id->ngroups = 0;
	for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		char *end;
		unsigned long g = strtoul(t, &end, 10);

		if (*end || end == t || g > UINT32_MAX || id->ngroups == IDENTITY_MAX_GROUPS)
			return -EINVAL;
		id->groups[id->ngroups++] = (gid_t)g;
	}
	return 0;
}

int identity_parse(const char *text, size_t len, struct identity *ret, const char **ret_field)
{
	static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
	struct identity id = { 0 };
	uint64_t *capv[] = { &id.cap_inh, &id.cap_prm, &id.cap_eff, &id.cap_bnd, &id.cap_amb };
	unsigned u[4], g[4];
	const char *v;
	size_t n;

	if ((v = field(text, len, *ret_field = "Uid", &n), parse_ids(v, n, u)) < 0 ||
	    (v = field(text, len, *ret_field = "Gid", &n), parse_ids(v, n, g)) < 0 ||
	    (v = field(text, len, *ret_field = "Groups", &n), parse_groups(v, n, &id)) < 0 ||
	    (v = field(text, len, *ret_field = "NoNewPrivs", &n), parse_small(v, n, 1, &id.no_new_privs)) < 0 ||
	    (v = field(text, len, *ret_field = "Seccomp", &n), parse_small(v, n, 2, &id.seccomp)) < 0)
		return -EINVAL;
	for (size_t i = 0; i < 5; i++)
		if ((v = field(text, len, *ret_field = caps[i], &n), parse_hex64(v, n, capv[i])) < 0)
			return -EINVAL;
	for (int i = 0; i < 4; i++) {
		id.uid[i] = u[i];
		id.gid[i] = g[i];
	}
	*ret_field = NULL;
	*ret = id;
	return 0;
}

static int read_status_fd(int fd, struct buf *b)
{
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (buf_reserve(b, 4096) < 0)
			return -EFBIG;
		n = read(fd, b->data + b->len, b->cap - b->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		b->len += (size_t)n;
		b->data[b->len] = '\0';
	}
}

int identity_read(struct identity *ret, const char **ret_field)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC), r;

	*ret_field = "/proc/self/status";
	if (fd < 0)
		return -errno;
	r = identity_read_fd(fd, ret, ret_field);
	close(fd);
	return r;
}

int identity_read_fd(int status_fd, struct identity *ret, const char **ret_field)
{
	struct buf b;
	long abi;
	int r, fd;

	buf_init(&b, IDENTITY_STATUS_MAX_BYTES);
	*ret_field = "/proc/self/status";
	r = read_status_fd(status_fd, &b);
	if (r == 0)
		r = identity_parse(b.data ? b.data : "", b.len, ret, ret_field);
	buf_free(&b);
	if (r < 0)
		return r;
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	ret->landlock_abi = abi > 0 ? (int)abi : 0;
	/* Without Landlock, / can always be opened for reading (its mode is 0755 and nothing else
	 * checks a directory open). Under the rulesets `proctor drop` builds, which handle READ_DIR
	 * and allow only the listed paths, it is refused with EACCES. */
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret->landlock_enforced = fd < 0 && errno == EACCES && ret->landlock_abi > 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

json_t *identity_json(const struct identity *id)
{
	json_t *groups = json_array();
	char hex[5][20];
	const uint64_t caps[5] = { id->cap_inh, id->cap_prm, id->cap_eff, id->cap_bnd, id->cap_amb };

	for (size_t i = 0; i < id->ngroups; i++)
		json_array_append_new(groups, json_integer(id->groups[i]));
	for (int i = 0; i < 5; i++)
		snprintf(hex[i], sizeof(hex[i]), "%016" PRIx64, caps[i]);
	return json_pack("{s:[I,I,I,I],s:[I,I,I,I],s:o,s:{s:s,s:s,s:s,s:s,s:s},s:b,s:i,s:{s:i,s:b}}", "uid",
			 (json_int_t)id->uid[0], (json_int_t)id->uid[1], (json_int_t)id->uid[2], (json_int_t)id->uid[3],
			 "gid", (json_int_t)id->gid[0], (json_int_t)id->gid[1], (json_int_t)id->gid[2],
			 (json_int_t)id->gid[3], "groups", groups, "caps", "inheritable", hex[0], "permitted", hex[1],
			 "effective", hex[2], "bounding", hex[3], "ambient", hex[4], "no_new_privs", id->no_new_privs,
			 "seccomp", id->seccomp, "landlock", "abi", id->landlock_abi, "enforced",
			 id->landlock_enforced);
}

static bool group_in(gid_t g, const gid_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == g)
			return true;
	return false;
}

size_t identity_check(const struct identity *id, const struct identity_expect *e, char **ret_report)
{
	struct buf b;
	size_t bad = 0;

	buf_init(&b, 0);
#define MISMATCH(...) (bad++, buf_printf(&b, __VA_ARGS__), buf_printf(&b, "\n"))
	for (int i = 0; e->uid && i < 4; i++)
		if (id->uid[i] != e->want_uid)
			MISMATCH("uid slot %d is %u, expected %u", i, id->uid[i], e->want_uid);
	for (int i = 0; e->gid && i < 4; i++)
		if (id->gid[i] != e->want_gid)
			MISMATCH("gid slot %d is %u, expected %u", i, id->gid[i], e->want_gid);
	if (e->groups) {
		bool same = id->ngroups == e->nwant_groups;

		for (size_t i = 0; same && i < id->ngroups; i++)
			same = group_in(id->groups[i], e->want_groups, e->nwant_groups);
		for (size_t i = 0; same && i < e->nwant_groups; i++)
			same = group_in(e->want_groups[i], id->groups, id->ngroups);
		if (!same)
			MISMATCH("supplementary groups are not the expected set (%zu present, %zu expected)",
				 id->ngroups, e->nwant_groups);
	}
	if (e->no_caps && (id->cap_inh | id->cap_prm | id->cap_eff | id->cap_bnd | id->cap_amb))
		MISMATCH("capabilities are not all zero (inh %" PRIx64 " prm %" PRIx64 " eff %" PRIx64 " bnd %" PRIx64
			 " amb %" PRIx64 ")",
			 id->cap_inh, id->cap_prm, id->cap_eff, id->cap_bnd, id->cap_amb);
	if (e->nnp && id->no_new_privs != 1)
		MISMATCH("NoNewPrivs is %d, expected 1", id->no_new_privs);
	if (e->landlock && !id->landlock_enforced)
		MISMATCH("Landlock is not enforced (kernel ABI %d)", id->landlock_abi);
#undef MISMATCH
	*ret_report = b.data;
	return bad;
}
