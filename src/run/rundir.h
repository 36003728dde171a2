/* SPDX-License-Identifier: MIT */
/* rundir.h: the run directory's layout and staging (doc/RESULT.md): make it, copy the
 * workspace in (links kept as links, never followed), write root-only files, take an identity
 * slot under a lock, and after the run look for private material in the workspace. Everything
 * is done relative to directory fds with O_NOFOLLOW: the workspace is the agent's afterwards. */
#ifndef PROCTOR_RUN_RUNDIR_H
#define PROCTOR_RUN_RUNDIR_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/diag.h"
#include "../lib/strv.h"

#define RUN_TREE_MAX_ENTRIES 100000u
#define RUN_TREE_MAX_BYTES (4ULL << 30)
#define RUN_TREE_MAX_DEPTH 64u
#define RUN_LOCK_DIR "/run/proctor"
#define RUN_SLOT_WAIT_MS 10000u

/* Make `path` (0711, root) or reuse it when it is an empty directory; *ret_fd is an O_DIRECTORY
 * fd on it. -EEXIST when it exists and is not empty. */
int rundir_create(const char *path, int *ret_fd);
/* mkdirat + chown + chmod (chmod after chown: the mode is exact whatever the umask). */
int rundir_mkdir(int dirfd, const char *name, mode_t mode, uid_t uid, gid_t gid);
/* Make every directory of the relative path `rel` beneath dirfd that is missing (mode 0700,
 * owned by uid:gid), one component at a time with O_NOFOLLOW: a link on the way is an error
 * (-ELOOP or -ENOTDIR), never followed. Existing directories are kept as they are. `rel` must
 * have no empty, "." or ".." component (-EINVAL). With ret_fd, an O_DIRECTORY fd on the last. */
int rundir_mkpath(int dirfd, const char *rel, uid_t uid, gid_t gid, int *ret_fd);
/* A symbolic link at the relative path `rel` (its parents made as rundir_mkpath does) holding
 * `target`; -EEXIST when anything is there already. The link is root's: the target is never
 * opened. */
int rundir_symlink(int dirfd, const char *rel, const char *target, uid_t uid, gid_t gid);
/* Create `name` in dirfd (O_EXCL, never following links) with exactly these bytes, owner, mode. */
int rundir_write(int dirfd, const char *name, const void *data, size_t len, mode_t mode, uid_t uid, gid_t gid);
/* Copy the file at `src` (a path the task author gave) to `name` in dirfd. */
int rundir_copy_file(const char *src, int dirfd, const char *name, mode_t mode, uid_t uid, gid_t gid);
/* Copy the tree at `src` into the existing directory dirfd: regular files, directories and
 * symbolic links (as links), owned by uid:gid, modes kept (without set-id and sticky bits).
 * Errors name the path at fault in `d`. Limits above. */
int rundir_copy_tree(const char *src, int dirfd, uid_t uid, gid_t gid, struct diag *d);

struct private_file {
	char sha256[65];
	off_t size;
	struct strv leaked_into; /* workspace-relative paths with the same bytes */
};
/* Walk the workspace (never following links; bounded as above) and record every regular file
 * whose bytes are one of the private files'. 0 or -errno (the walk's limits are not errors:
 * *ret_truncated says it stopped early). */
int rundir_find_private(int ws_fd, struct private_file *priv, size_t npriv, int *ret_truncated);
/* SHA-256 of a file, opened without following a final link. */
int rundir_hash_file(int dirfd, const char *name, char out[65], off_t *ret_size);

#define RUN_SLOT_IDS 4
/* Take one of `slots` identity slots: slot k uses every id in `base` plus k (the agent's uid and
 * gid, mockd's uid, the rpc gid), and holds an exclusive flock on RUN_LOCK_DIR/id-<N>.lock for
 * each distinct one, so two runs never share an id whatever their tasks say. Waits up to
 * RUN_SLOT_WAIT_MS, or until a signal of `stop` (blocked by the caller) is pending. *ret_slot =
 * k, ret_fds the locks (-1 for duplicates; close them to release). -EBUSY when every slot
 * stayed taken, -EINTR when a stop signal came first (it stays pending). */
int rundir_take_slot(const unsigned base[RUN_SLOT_IDS], unsigned slots, const sigset_t *stop, unsigned *ret_slot,
		     int ret_fds[RUN_SLOT_IDS]);

#endif
