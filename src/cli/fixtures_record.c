/* SPDX-License-Identifier: MIT */
/* fixtures_record.c: `proctor fixtures record`: mockd in recording mode. Every call goes to the
 * real tool (no shell, bounded); each distinct argv becomes an exact rule, redacted first. */
#include "fixtures.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/fd.h"
#include "../lib/log.h"
#include "../lib/path.h"
#include "../lib/util.h"
#include "../mock/record.h"
#include "../mock/server.h"
#include "cli.h"

static const char record_usage[] =
	"usage: proctor fixtures record --tool T --out FIXTURE [--redact REGEX]... [--socket PATH]\n"
	"              [--socket-mode MODE] [--allow-uid UID]... [--ready-fd N]\n"
	"              [--passthrough-timeout SEC] -- REAL_TOOL\n"
	"Serve T on the socket like mockd, but answer every call from REAL_TOOL and record each distinct\n"
	"argv as an exact rule in FIXTURE (rewritten atomically as rules are added). Each --redact\n"
	"pattern (POSIX extended regex) is replaced by " RECORD_PLACEHOLDER " in argv, stdout and stderr\n"
	"before anything is written. Stop with SIGTERM or SIGINT. Refuses to run when REAL_TOOL is\n"
	"not an executable or FIXTURE exists. Exit 0 stopped, 1 failure, 2 usage.\n";

struct record_args {
	const char *tool, *out, *socket;
	struct strv redact;
	uid_t uids[64];
	size_t nuids;
	unsigned mode;
	int ready_fd;
	unsigned long pt_timeout_s;
};

static void record_parse(struct record_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tool", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ "redact", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 's' },
		{ "socket-mode", required_argument, NULL, 'm' },
		{ "allow-uid", required_argument, NULL, 'u' },
		{ "ready-fd", required_argument, NULL, 'f' },
		{ "passthrough-timeout", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c;

	*a = (struct record_args){ .mode = 0660, .ready_fd = -1, .pt_timeout_s = 60 };
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			a->tool = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'r':
			if (strv_push(&a->redact, optarg) < 0)
				die(EXIT_FAILURE_, "out of memory");
			break;
		case 's':
			a->socket = optarg;
			break;
		case 'm':
			if (parse_mode(optarg, &a->mode) < 0 || a->mode > 0777)
				die(EXIT_USAGE, "--socket-mode: '%s' is not an octal mode", optarg);
			break;
		case 'u':
			if (a->nuids == 64 || parse_ulong(optarg, 0, 4294967294UL, &v) < 0)
				die(EXIT_USAGE, "--allow-uid: '%s' is not a uid (at most 64)", optarg);
			a->uids[a->nuids++] = (uid_t)v;
			break;
		case 'f':
			if (fd_parse(optarg, &a->ready_fd) < 0 || a->ready_fd <= 2)
				die(EXIT_USAGE, "--ready-fd: '%s' is not an open file descriptor above 2", optarg);
			break;
		case 'p':
			if (parse_ulong(optarg, 1, 3600, &a->pt_timeout_s) < 0)
				die(EXIT_USAGE, "--passthrough-timeout: whole seconds from 1 to 3600");
			break;
		case 'h':
			fputs(record_usage, stdout);
			exit(EXIT_OK);
		default:
			fputs(record_usage, stderr);
			exit(EXIT_USAGE);
		}
	}
	if (!a->tool || !a->out || optind + 1 != argc)
		die(EXIT_USAGE, "give --tool T --out FIXTURE -- REAL_TOOL (see --help)");
	if (!mock_tool_name_valid(a->tool))
		die(EXIT_USAGE, "--tool: '%s' is not a bare executable name", a->tool);
}

static void record_on_error(const char *msg)
{
	log_error("%s", msg);
}

static void record_on_call(void *ctx, const struct mock_tool *t, const char *const *argv, size_t argc, int exit_code,
			   const struct buf *out, const struct buf *err)
{
	struct recorder *rec = ctx;
	int r = recorder_add(rec, argv, argc, exit_code, out->data ? out->data : "", out->len,
			     err->data ? err->data : "", err->len);

	(void)t;
	if (r < 0)
		log_error("%s: cannot record: %s", rec->out_path, strerror(-r));
}

static struct mock_service *record_service(const struct record_args *a, const char *exe)
{
	static const char empty[] = "{\"version\":1,\"responses\":[]}";
	struct mock_service *svc = NULL;
	struct mock_config *cfg = NULL;
	struct fixture *f = NULL;
	struct diag d;

	diag_init(&d);
	if (mock_config_single(a->tool, "(recording)", &cfg) < 0 ||
	    fixture_load_buf("(recording)", empty, sizeof(empty) - 1, &d, &f) < 0)
		die(EXIT_FAILURE_, "out of memory");
	cfg->tools[0].passthrough_timeout_ms = (unsigned)a->pt_timeout_s * 1000u;
	if (mock_service_single(cfg, f, NULL, &d, &svc) < 0 || !(svc->tools[0].exe = strdup(exe)))
		die(EXIT_FAILURE_, "cannot set up the recording service");
	svc->tools[0].record = true;
	svc->cfg->tools[0].max_requests = 100000000; /* the operator records as long as it takes */
	svc->tools[0].unconfined = true;             /* the operator's own tool, with the operator's environment */
	diag_free(&d);
	return svc;
}

int fixtures_record(int argc, char **argv)
{
	struct record_args a;
	struct recorder rec;
	struct mock_server_opts so = { 0 };
	struct mock_server *srv = NULL;
	struct mock_service *svc = NULL;
	struct journal j = { .fd = -1 };
	struct diag d;
	struct stat st;
	size_t bad = 0;
	char *exe;
	int status = EXIT_FAILURE_;

	record_parse(&a, argc, argv);
	exe = path_find_executable(argv[optind], NULL, NULL);
	if (!exe)
		die(EXIT_FAILURE_, "%s: not an executable (on PATH or as a path); nothing recorded", argv[optind]);
	if (lstat(a.out, &st) == 0)
		die(EXIT_FAILURE_, "%s: already exists; refusing to overwrite it", a.out);
	if (recorder_init(&rec, a.out, a.redact.v, a.redact.n, &bad) < 0)
		die(EXIT_USAGE, "--redact: '%s' is not a valid extended regular expression",
		    bad < a.redact.n ? a.redact.v[bad] : "(too many)");
	if (recorder_write(&rec) < 0)
		die(EXIT_FAILURE_, "%s: cannot write: %s", a.out, strerror(errno));
	svc = record_service(&a, exe);
	so = (struct mock_server_opts){ .socket_path = a.socket ? a.socket : MOCK_DEFAULT_SOCKET,
					.ready_fd = a.ready_fd,
					.socket_gid = (gid_t)-1,
					.socket_mode = a.mode,
					.client_timeout_ms = MOCK_DEFAULT_CLIENT_TIMEOUT_MS,
					.max_clients = MOCK_DEFAULT_MAX_CLIENTS,
					.on_error = record_on_error,
					.on_passthrough = record_on_call,
					.ctx = &rec };
	if (a.nuids) {
		so.allowed_uids = a.uids;
		so.nallowed = a.nuids;
	} else {
		a.uids[0] = geteuid();
		so.allowed_uids = a.uids;
		so.nallowed = 1; /* recording is the author's session: only the author's uid */
	}
	diag_init(&d);
	if (mock_server_bind(&so, &d, &srv) == 0 && mock_server_run(srv, svc, &j, &d) == 0)
		status = EXIT_OK;
	fx_print_diag(stderr, &d);
	diag_free(&d);
	fprintf(stderr, "%s: %zu rules recorded from %s\n", a.out, json_array_size(rec.rules), exe);
	if (rec.last_error)
		status = EXIT_FAILURE_;
	mock_server_free(srv);
	mock_service_free(svc);
	recorder_free(&rec);
	strv_free(&a.redact);
	free(exe);
	return status;
}
