/* SPDX-License-Identifier: MIT */
/* mockd.c: `proctor mockd`: parse options, load and validate everything, bind, serve. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/diag.h"
#include "../lib/fd.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../mock/fixture.h"
#include "../mock/journal.h"
#include "../mock/sandbox.h"
#include "../mock/server.h"
#include "../mock/service.h"
#include "../priv/drop.h"

#define MOCKD_MAX_ALLOWED_UIDS 64

static const char mockd_usage[] =
	"usage: proctor mockd --config FILE [OPTIONS]\n"
	"       proctor mockd --tool NAME --fixture FILE [--passthrough 'WORDS']... [OPTIONS]\n"
	"\n"
	"Serve recorded CLI responses over a Unix socket, journaling every call.\n"
	"\n"
	"  --config FILE             mock-config.json: {\"version\":1,\"tools\":[...]}\n"
	"  --tool NAME               shorthand for a one-tool config, with:\n"
	"    --fixture FILE          its fixture file\n"
	"    --passthrough 'WORDS'   argv prefix served by the real tool (repeatable)\n"
	"    --passthrough-exec PATH the real tool (default: NAME on PATH)\n"
	"    --max-requests N        request budget (default 1000)\n"
	"    --noise-flag FLAG       flag ignored with its value when matching (repeatable;\n"
	"                            replaces the default --output)\n"
	"    --passthrough-read PATH   the real tool may read PATH (repeatable)\n"
	"    --passthrough-write PATH  the real tool may read and write PATH (repeatable)\n"
	"    --passthrough-env N=V     the real tool's environment (repeatable; default PATH only)\n"
	"  --socket PATH             default /run/proctor/mock.sock\n"
	"  --socket-group GROUP      group of the socket (name or number)\n"
	"  --socket-mode MODE        octal, default 0660\n"
	"  --allow-uid UID           peer uid allowed to call (repeatable; default 0, 2000\n"
	"                            and, when not root, mockd's own uid)\n"
	"  --journal FILE            one JSON line per call; must be absent or empty unless\n"
	"    --journal-append        is given; a regular file, never a link\n"
	"    --journal-max-bytes N   past N bytes calls fail closed with 70 (default 1 GiB)\n"
	"  --ready-fd N              write a newline to fd N once serving, then close it\n"
	"  --client-timeout SEC      time a client has to send its request (default 10)\n"
	"  --passthrough-timeout SEC real tool time limit (default 60)\n"
	"  --max-clients N           concurrent clients (default 4096)\n"
	"  --user USER --group GROUP drop to this identity (as root only; never 0) once the\n"
	"                            fixtures are loaded, the socket bound and the journal open\n"
	"  --groups G,G,...          supplementary groups after the drop (default none)\n"
	"  --check                   validate the config and fixtures, then exit\n"
	"  -v, --verbose             say what is being served\n"
	"\n"
	"Exit: 0 stopped by SIGTERM/SIGINT (or --check passed), 1 invalid input or startup\n"
	"failure, 2 usage. See proctor-mockd(1).\n";

struct mockd_args {
	const char *config, *tool, *fixture, *pt_exec, *socket, *journal, *group, *user, *run_group;
	struct strv prefixes, noise, pt_read, pt_write, pt_env;
	unsigned long max_requests, client_timeout_s, pt_timeout_s, max_clients;
	bool has_noise, check, has_client_timeout, has_pt_timeout, journal_append;
	unsigned long long journal_max;
	int ready_fd;
	unsigned mode;
	uid_t uids[MOCKD_MAX_ALLOWED_UIDS];
	size_t nuids;
	struct drop_opts drop; /* valid when user is set */
};

enum {
	OPT_CONFIG = 256,
	OPT_TOOL,
	OPT_FIXTURE,
	OPT_PASSTHROUGH,
	OPT_PT_EXEC,
	OPT_MAX_REQ,
	OPT_NOISE,
	OPT_SOCKET,
	OPT_GROUP,
	OPT_MODE,
	OPT_ALLOW,
	OPT_JOURNAL,
	OPT_READY,
	OPT_CTIMEOUT,
	OPT_PTIMEOUT,
	OPT_MAXCLI,
	OPT_CHECK,
	OPT_USER,
	OPT_RUN_GROUP,
	OPT_RUN_GROUPS,
	OPT_PT_READ,
	OPT_PT_WRITE,
	OPT_PT_ENV,
	OPT_JAPPEND,
	OPT_JMAX,
};

static const struct option mockd_opts[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "tool", required_argument, NULL, OPT_TOOL },
	{ "fixture", required_argument, NULL, OPT_FIXTURE },
	{ "passthrough", required_argument, NULL, OPT_PASSTHROUGH },
	{ "passthrough-exec", required_argument, NULL, OPT_PT_EXEC },
	{ "max-requests", required_argument, NULL, OPT_MAX_REQ },
	{ "noise-flag", required_argument, NULL, OPT_NOISE },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "socket-group", required_argument, NULL, OPT_GROUP },
	{ "socket-mode", required_argument, NULL, OPT_MODE },
	{ "allow-uid", required_argument, NULL, OPT_ALLOW },
	{ "journal", required_argument, NULL, OPT_JOURNAL },
	{ "journal-append", no_argument, NULL, OPT_JAPPEND },
	{ "journal-max-bytes", required_argument, NULL, OPT_JMAX },
	{ "ready-fd", required_argument, NULL, OPT_READY },
	{ "client-timeout", required_argument, NULL, OPT_CTIMEOUT },
	{ "passthrough-timeout", required_argument, NULL, OPT_PTIMEOUT },
	{ "max-clients", required_argument, NULL, OPT_MAXCLI },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "passthrough-read", required_argument, NULL, OPT_PT_READ },
	{ "passthrough-write", required_argument, NULL, OPT_PT_WRITE },
	{ "passthrough-env", required_argument, NULL, OPT_PT_ENV },
	{ "user", required_argument, NULL, OPT_USER },
	{ "group", required_argument, NULL, OPT_RUN_GROUP },
	{ "groups", required_argument, NULL, OPT_RUN_GROUPS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void strv_add_or_die(struct strv *s, const char *v)
{
	if (strv_push(s, v) < 0)
		die(EXIT_FAILURE_, "out of memory");
}

static unsigned long num_or_die(const char *opt, const char *v, unsigned long min, unsigned long max)
{
	unsigned long n;

	if (parse_ulong(v, min, max, &n) < 0)
		die(EXIT_USAGE, "%s: '%s' is not a whole number from %lu to %lu", opt, v, min, max);
	return n;
}

static uid_t user_or_die(const char *opt, const char *v)
{
	unsigned long n;
	struct passwd *pw;

	if (parse_ulong(v, 0, 4294967294UL, &n) == 0)
		return (uid_t)n;
	if (!(pw = getpwnam(v)))
		die(EXIT_USAGE, "%s: no user named '%s'", opt, v);
	return pw->pw_uid;
}

static gid_t group_or_die(const char *opt, const char *v)
{
	unsigned long n;
	struct group *gr;

	if (parse_ulong(v, 0, 4294967294UL, &n) == 0)
		return (gid_t)n;
	if (!(gr = getgrnam(v)))
		die(EXIT_USAGE, "%s: no group named '%s'", opt, v);
	return gr->gr_gid;
}

static void groups_or_die(struct drop_opts *o, const char *list)
{
	_cleanup_free_ char *copy = strdup(list);
	char *save = NULL;

	if (!copy)
		die(EXIT_FAILURE_, "out of memory");
	o->ngroups = 0;
	/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc): copy is freed by _cleanup_free_, which the analyzer does not model */
	for (char *g = strtok_r(copy, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		if (o->ngroups == IDENTITY_MAX_GROUPS)
			die(EXIT_USAGE, "--groups: at most %d groups", IDENTITY_MAX_GROUPS);
		o->groups[o->ngroups++] = group_or_die("--groups", g);
	}
}

static int mockd_parse_one(struct mockd_args *a, int c)
{
	switch (c) {
	case OPT_CONFIG:
		a->config = optarg;
		break;
	case OPT_TOOL:
		a->tool = optarg;
		break;
	case OPT_FIXTURE:
		a->fixture = optarg;
		break;
	case OPT_PASSTHROUGH:
		strv_add_or_die(&a->prefixes, optarg);
		break;
	case OPT_PT_EXEC:
		a->pt_exec = optarg;
		break;
	case OPT_PT_READ:
	case OPT_PT_WRITE:
		if (optarg[0] != '/')
			die(EXIT_USAGE, "--passthrough-%s: '%s' must be an absolute path",
			    c == OPT_PT_READ ? "read" : "write", optarg);
		strv_add_or_die(c == OPT_PT_READ ? &a->pt_read : &a->pt_write, optarg);
		break;
	case OPT_PT_ENV:
		if (!sandbox_env_valid(optarg))
			die(EXIT_USAGE, "--passthrough-env: '%s' is not NAME=VALUE", optarg);
		strv_add_or_die(&a->pt_env, optarg);
		break;
	case OPT_MAX_REQ:
		a->max_requests = num_or_die("--max-requests", optarg, 1, 100000000);
		break;
	case OPT_NOISE:
		if (optarg[0] != '-' || strchr(optarg, '='))
			die(EXIT_USAGE, "--noise-flag: '%s' must start with '-' and contain no '='", optarg);
		strv_add_or_die(&a->noise, optarg);
		a->has_noise = true;
		break;
	case OPT_SOCKET:
		a->socket = optarg;
		break;
	case OPT_GROUP:
		a->group = optarg;
		break;
	case OPT_MODE:
		if (parse_mode(optarg, &a->mode) < 0 || a->mode > 0777)
			die(EXIT_USAGE, "--socket-mode: '%s' is not an octal mode such as 0660", optarg);
		break;
	case OPT_ALLOW:
		if (a->nuids == MOCKD_MAX_ALLOWED_UIDS)
			die(EXIT_USAGE, "--allow-uid: at most %d uids", MOCKD_MAX_ALLOWED_UIDS);
		a->uids[a->nuids++] = (uid_t)num_or_die("--allow-uid", optarg, 0, 4294967294UL);
		break;
	case OPT_JOURNAL:
		a->journal = optarg;
		break;
	case OPT_JAPPEND:
		a->journal_append = true;
		break;
	case OPT_JMAX:
		a->journal_max = num_or_die("--journal-max-bytes", optarg, 4096, 1UL << 40);
		break;
	case OPT_READY:
		if (fd_parse(optarg, &a->ready_fd) < 0 || a->ready_fd <= 2)
			die(EXIT_USAGE, "--ready-fd: '%s' is not an open file descriptor above 2", optarg);
		break;
	case OPT_CTIMEOUT:
		a->client_timeout_s = num_or_die("--client-timeout", optarg, 1, 3600);
		a->has_client_timeout = true;
		break;
	case OPT_PTIMEOUT:
		a->pt_timeout_s = num_or_die("--passthrough-timeout", optarg, 1, 3600);
		a->has_pt_timeout = true;
		break;
	case OPT_MAXCLI:
		a->max_clients = num_or_die("--max-clients", optarg, 1, 1000000);
		break;
	case OPT_CHECK:
		a->check = true;
		break;
	case OPT_USER:
		a->user = optarg;
		a->drop.uid = user_or_die("--user", optarg);
		break;
	case OPT_RUN_GROUP:
		a->run_group = optarg;
		a->drop.gid = group_or_die("--group", optarg);
		break;
	case OPT_RUN_GROUPS:
		groups_or_die(&a->drop, optarg);
		break;
	case 'v':
		log_set_verbose(1);
		break;
	case 'h':
		fputs(mockd_usage, stdout);
		exit(EXIT_OK);
	default:
		fputs(mockd_usage, stderr);
		exit(EXIT_USAGE);
	}
	return 0;
}

/* --user/--group/--groups: all or nothing, as root only, never to root. */
static void mockd_parse_identity(struct mockd_args *a)
{
	if (!a->user && !a->run_group && !a->drop.ngroups)
		return;
	if (!a->user || !a->run_group)
		die(EXIT_USAGE, "--user, --group and --groups go together: give both --user and --group");
	if (a->drop.uid == 0)
		die(EXIT_USAGE, "--user: '%s' is root; mockd never serves as root after a drop", a->user);
	if (a->drop.gid == 0)
		die(EXIT_USAGE, "--group: '%s' is group 0 (root)", a->run_group);
	if (geteuid() != 0 && !a->check)
		die(EXIT_USAGE, "--user: only root can change identity (running as uid %u)", (unsigned)geteuid());
}

static void mockd_parse(struct mockd_args *a, int argc, char **argv)
{
	int c;

	*a = (struct mockd_args){ .ready_fd = -1, .mode = 0660, .max_clients = MOCK_DEFAULT_MAX_CLIENTS };
	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", mockd_opts, NULL)) != -1)
		mockd_parse_one(a, c);
	if (optind < argc)
		die(EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[optind]);
	if (!a->config == !a->tool)
		die(EXIT_USAGE, "give either --config FILE or --tool NAME --fixture FILE (see --help)");
	if (a->tool && !a->fixture)
		die(EXIT_USAGE, "--tool needs --fixture FILE");
	if (a->config && (a->fixture || a->prefixes.n || a->pt_exec || a->max_requests || a->has_noise ||
			  a->pt_read.n || a->pt_write.n || a->pt_env.n))
		die(EXIT_USAGE,
		    "--fixture, --passthrough*, --max-requests and --noise-flag go with --tool, not --config");
	if (a->tool && !mock_tool_name_valid(a->tool))
		die(EXIT_USAGE, "--tool: '%s' is not a bare executable name", a->tool);
	if (a->pt_exec && a->pt_exec[0] != '/')
		die(EXIT_USAGE, "--passthrough-exec: '%s' must be an absolute path", a->pt_exec);
	mockd_parse_identity(a);
}

static void diag_print(const struct diag *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(stderr, "%s: %s%s\n", log_prog(), d->msgs[i].level == DIAG_WARNING ? "warning: " : "",
			d->msgs[i].text);
	if (d->errors + d->warnings > d->n)
		fprintf(stderr, "%s: ... and %zu more\n", log_prog(), d->errors + d->warnings - d->n);
}

static void mockd_runtime_error(const char *msg)
{
	log_error("%s", msg);
}

/* Build the config from --config or from the --tool shorthand. */
static struct mock_config *mockd_config(struct mockd_args *a, struct diag *d)
{
	struct mock_config *c = NULL;
	struct mock_tool_config *t;
	int r;

	if (a->config) {
		r = mock_config_load(a->config, d, &c);
		return r < 0 ? NULL : c;
	}
	if (mock_config_single(a->tool, a->fixture, &c) < 0)
		die(EXIT_FAILURE_, "out of memory");
	t = &c->tools[0];
	if (a->max_requests)
		t->max_requests = a->max_requests;
	for (size_t i = 0; i < a->prefixes.n; i++) {
		r = mock_tool_add_prefix(t, a->prefixes.v[i]);
		if (r < 0)
			die(EXIT_USAGE, "--passthrough: '%s' %s", a->prefixes.v[i],
			    r == -EEXIST ? "is given twice" : "must be 1 to 8 words");
	}
	if (a->pt_exec && !(t->passthrough_executable = strdup(a->pt_exec)))
		die(EXIT_FAILURE_, "out of memory");
	t->pt_read = a->pt_read;
	t->pt_write = a->pt_write;
	t->pt_env = a->pt_env;
	a->pt_read = a->pt_write = a->pt_env = (struct strv){ 0 };
	if (a->has_noise) {
		t->has_noise_flags = true;
		t->noise_flags = a->noise;
		a->noise = (struct strv){ 0 };
	}
	return c;
}

/* Default: root and the agent (2000), plus our own uid when unprivileged (development). */
static size_t mockd_allowed(struct mockd_args *a, const struct mock_config *c, uid_t *out)
{
	size_t n = 0;

	if (a->nuids) {
		memcpy(out, a->uids, a->nuids * sizeof(uid_t));
		return a->nuids;
	}
	if (c->nallowed) {
		memcpy(out, c->allowed_uids, c->nallowed * sizeof(uid_t));
		return c->nallowed;
	}
	out[n++] = 0;
	out[n++] = 2000;
	if (geteuid() != 0)
		out[n++] = geteuid();
	return n;
}

static gid_t mockd_group(const char *g)
{
	unsigned long n;
	struct group *gr;

	if (!g)
		return (gid_t)-1;
	if (parse_ulong(g, 0, 4294967294UL, &n) == 0)
		return (gid_t)n;
	gr = getgrnam(g);
	if (!gr)
		die(EXIT_USAGE, "--socket-group: no group named '%s'", g);
	return gr->gr_gid;
}

static void mockd_report(const struct mock_service *svc, const char *sock)
{
	for (size_t i = 0; i < svc->ntools; i++) {
		const struct mock_tool *t = &svc->tools[i];

		if (t->cfg->nprefixes && !t->exe)
			log_warn("%s: passthrough prefixes are configured but %s is not an executable; "
				 "those calls will get exit 69",
				 t->cfg->tool,
				 t->cfg->passthrough_executable ? t->cfg->passthrough_executable :
								  "the tool is not on PATH or");
		log_info("%s: %zu rules from %s%s%s", t->cfg->tool, t->fixture->nrules, t->fixture->path,
			 t->exe ? ", passthrough to " : "", t->exe ? t->exe : "");
	}
	if (sock)
		log_info("serving on %s", sock);
}

static const char *journal_open_why(int r)
{
	switch (r) {
	case -EEXIST:
		return "it exists and is not empty (a journal is fresh; --journal-append adds to one)";
	case -EINVAL:
		return "not a regular file";
	case -EMLINK:
		return "it has other hard links";
	case -ELOOP:
		return "it is a symbolic link";
	default:
		return strerror(-r);
	}
}

/* The real tools' sandboxes, built while everything can still be opened: none may reach the
 * journal or the socket's directory (nor, service.c adds, a fixture or the config). */
static int mockd_confine(struct mock_service *svc, const char *journal, const char *sock, struct diag *d)
{
	_cleanup_free_ char *dir = strdup(sock);
	const char *protect[2];
	char *slash;
	size_t n = 0;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc): dir is freed by _cleanup_free_ (not modelled) */
	protect[n++] = slash ? dir : ".";
	if (journal)
		protect[n++] = journal;
	/* cppcheck-suppress memleak ; dir is freed by _cleanup_free_, which cppcheck does not know */
	return mock_service_confine(svc, protect, n, d);
}

/* Everything that needs root is done (fixtures read, socket bound and chowned, journal open):
 * become the service identity and prove it before the readiness byte is written. */
static int mockd_drop(struct mockd_args *a, struct diag *d)
{
	const char *step = "?";
	int r = drop_prepare(&a->drop, &step);

	if (r == 0)
		r = drop_apply(&a->drop, &step);
	if (r < 0)
		diag_error(d, "--user %s --group %s: dropping privileges failed at %s: %s", a->user, a->run_group, step,
			   strerror(-r));
	return r;
}

int cmd_mockd(int argc, char **argv)
{
	struct mockd_args a;
	struct mock_server_opts so = { 0 };
	struct mock_service *svc = NULL;
	struct mock_server *srv = NULL;
	struct mock_config *cfg;
	struct journal j = { .fd = -1 };
	uid_t allowed[MOCKD_MAX_ALLOWED_UIDS + 1];
	char self[PATH_MAX];
	ssize_t sl;
	struct diag d;
	int r, status = EXIT_FAILURE_;

	mockd_parse(&a, argc, argv);
	diag_init(&d);
	cfg = mockd_config(&a, &d);
	if (!cfg)
		goto out;
	so.client_timeout_ms = a.has_client_timeout   ? (unsigned)a.client_timeout_s * 1000u :
			       cfg->client_timeout_ms ? cfg->client_timeout_ms :
							MOCK_DEFAULT_CLIENT_TIMEOUT_MS;
	for (size_t i = 0; a.has_pt_timeout && i < cfg->ntools; i++)
		cfg->tools[i].passthrough_timeout_ms = (unsigned)a.pt_timeout_s * 1000u;
	so.nallowed = mockd_allowed(&a, cfg, allowed);
	so.allowed_uids = allowed;
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = '\0';
	/* Everything is loaded and validated before the socket exists. */
	if (mock_service_load(cfg, self, &d, &svc) < 0)
		goto out;
	mockd_report(svc, a.check ? NULL : a.socket ? a.socket : MOCK_DEFAULT_SOCKET);
	so.socket_path = a.socket ? a.socket : MOCK_DEFAULT_SOCKET;
	if (!a.check) {
		r = journal_open_mode(&j, a.journal, a.journal_append);
		if (r < 0) {
			diag_error(&d, "%s: cannot open journal: %s", a.journal, journal_open_why(r));
			goto out;
		}
		j.max_bytes = a.journal_max;
	}
	if (mockd_confine(svc, a.journal, so.socket_path, &d) < 0)
		goto out;
	if (a.check) {
		status = EXIT_OK;
		goto out;
	}
	so.ready_fd = a.ready_fd;
	so.socket_gid = mockd_group(a.group);
	so.socket_mode = a.mode;
	so.max_clients = (unsigned)a.max_clients;
	so.on_error = mockd_runtime_error;
	if (mock_server_bind(&so, &d, &srv) < 0)
		goto out;
	/* Warnings so far (the fd limit) are said now, not when the daemon stops. */
	diag_print(&d);
	diag_free(&d);
	diag_init(&d);
	if (a.user && mockd_drop(&a, &d) < 0)
		goto out;
	/* A passthrough child runs as our uid: it must not be able to read our memory or fds. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	status = mock_server_run(srv, svc, &j, &d) < 0 ? EXIT_FAILURE_ : EXIT_OK;
out:
	diag_print(&d);
	mock_server_free(srv);
	mock_service_free(svc);
	journal_close(&j);
	diag_free(&d);
	strv_free(&a.prefixes);
	strv_free(&a.noise);
	strv_free(&a.pt_read);
	strv_free(&a.pt_write);
	strv_free(&a.pt_env);
	return status;
}
