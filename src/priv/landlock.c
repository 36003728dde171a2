/* SPDX-License-Identifier: MIT */
/* landlock.c: the Landlock ruleset proctor drop builds: every filesystem right of the kernel's
 * ABI is handled (so denied unless a rule grants it), and each listed path gets read-only,
 * read-write or read-execute rights. Network rights are not handled: agents talk to their model
 * over the network; the write boundary is the filesystem. */
#include "drop.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Debian 12's headers stop at ABI 2; these are the kernel's stable UAPI values for later ABIs. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6; the size passed says which fields the kernel reads. */
struct ll_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net; /* ABI 4 */
	__u64 scoped;             /* ABI 6 */
};

int landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi > 0 ? (int)abi : 0;
}

#define FS_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE)
#define FS_DIR_RIGHTS                                                                                   \
	(LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |     \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |  \
	 LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that apply to files, by ABI (TRUNCATE came with 3, IOCTL_DEV with 5). */
static unsigned long long file_rights(int abi)
{
	unsigned long long r = FS_FILE_RIGHTS;

	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

unsigned long long landlock_handled_fs(int abi)
{
	unsigned long long r = file_rights(abi) | FS_DIR_RIGHTS;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	return abi > 0 ? r : 0;
}

unsigned long long landlock_rule_access(enum landlock_kind kind, bool is_dir, int abi)
{
	unsigned long long read = LANDLOCK_ACCESS_FS_READ_FILE | (is_dir ? LANDLOCK_ACCESS_FS_READ_DIR : 0);

	switch (kind) {
	case LANDLOCK_RW:
		return is_dir ? landlock_handled_fs(abi) : file_rights(abi);
	case LANDLOCK_EXEC:
		return read | LANDLOCK_ACCESS_FS_EXECUTE;
	case LANDLOCK_RO:
	default:
		return read;
	}
}

/* Build and enforce the ruleset. Needs no_new_privs (or CAP_SYS_ADMIN). */
int landlock_enforce(const struct drop_opts *o);
int landlock_enforce(const struct drop_opts *o)
{
	int abi = landlock_abi();
	struct ll_ruleset_attr attr = { .handled_access_fs = landlock_handled_fs(abi) };
	size_t attr_size = abi >= 6 ? sizeof(attr) : abi >= 4 ? 2 * sizeof(__u64) : sizeof(__u64);
	int rs, r = 0;

	if (!abi)
		return -EOPNOTSUPP;
	if (o->landlock_scope) {
		if (abi < 6)
			return -EOPNOTSUPP;
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (rs < 0)
		return -errno;
	for (size_t i = 0; i < o->nll && r == 0; i++) {
		struct stat st;
		struct landlock_path_beneath_attr pb = { .parent_fd = o->ll[i].fd };

		if (fstat(o->ll[i].fd, &st) < 0) {
			r = -errno;
			break;
		}
		pb.allowed_access = landlock_rule_access(o->ll[i].kind, S_ISDIR(st.st_mode), abi);
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			r = -errno;
	}
	if (r == 0 && syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		r = -errno;
	close(rs);
	return r;
}
