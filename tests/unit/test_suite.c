/* SPDX-License-Identifier: MIT */
/* test_suite.c: proctor run --suite: where the index comes from and which wins, the suite's task
 * order (directory and JSON Lines), errors that name the source, the task id read ahead of
 * validation, and OUT/<id>/ across restarts (fresh, final result skipped, retryable moved). */
#include "helpers.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "../../src/run/suite.h"

static void test_suite__index_flag_wins_over_env(void **state)
{
	char *env[] = { "JOB_COMPLETION_INDEX=5", "SLURM_ARRAY_TASK_ID=6", NULL };
	char why[SUITE_WHY_SIZE];
	unsigned long i = 99;
	const char *src = NULL;

	(void)state;
	assert_int_equal(suite_index_pick("2", env, &i, &src, why), 0);
	assert_int_equal(i, 2);
	assert_string_equal(src, "--index");
	assert_int_equal(suite_index_pick(NULL, env, &i, &src, why), 0);
	assert_int_equal(i, 5);
	assert_string_equal(src, "JOB_COMPLETION_INDEX");
	assert_int_equal(suite_index_pick(NULL, env + 1, &i, &src, why), 0);
	assert_int_equal(i, 6);
	assert_string_equal(src, "SLURM_ARRAY_TASK_ID");
}

static void test_suite__index_errors_name_the_source(void **state)
{
	char *bad_k8s[] = { "JOB_COMPLETION_INDEX=1x", "SLURM_ARRAY_TASK_ID=0", NULL };
	char *empty[] = { "SLURM_ARRAY_TASK_IDX=1", "JOB_COMPLETION_INDEX_=2", NULL };
	char why[SUITE_WHY_SIZE];
	unsigned long i = 0;
	const char *src = NULL;

	(void)state;
	/* A malformed variable is an error, not a reason to fall through to the next one. */
	assert_int_equal(suite_index_pick(NULL, bad_k8s, &i, &src, why), -EINVAL);
	assert_non_null(strstr(why, "JOB_COMPLETION_INDEX: '1x' is not a task index"));
	assert_int_equal(suite_index_pick("-1", bad_k8s, &i, &src, why), -EINVAL);
	assert_non_null(strstr(why, "--index: '-1'"));
	assert_int_equal(suite_index_pick(" 1", NULL, &i, &src, why), -EINVAL);
	/* Names that only start like the variables are not them. */
	assert_int_equal(suite_index_pick(NULL, empty, &i, &src, why), -ENOENT);
	assert_non_null(strstr(why, "no task index"));
}

static void test_suite__dir_byte_order_json_only(void **state)
{
	struct suite s;
	char why[SUITE_WHY_SIZE], d[128], *cwd;

	(void)state;
	snprintf(d, sizeof(d), "%s/s", scratch_dir);
	assert_int_equal(mkdir(d, 0755), 0);
	scratch_file("s/b.json", "{}");
	scratch_file("s/B.json", "{}");
	scratch_file("s/a10.json", "{}");
	scratch_file("s/a2.json", "{}");
	scratch_file("s/.hidden.json", "{}");
	scratch_file("s/notes.txt", "x");
	scratch_file("s/x.json.bak", "x");
	assert_int_equal(mkdir(strcat(d, "/dir.json"), 0755), 0); /* not a file */
	snprintf(d, sizeof(d), "%s/s/link.json", scratch_dir);
	assert_int_equal(symlink("b.json", d), 0); /* a link to a task file is one */
	snprintf(d, sizeof(d), "%s/s/dangling.json", scratch_dir);
	assert_int_equal(symlink("nothing.json", d), 0);
	cwd = getcwd(NULL, 0);
	assert_int_equal(chdir(scratch_dir), 0);
	assert_int_equal(suite_load("s", &s, why), 0);
	assert_int_equal(chdir(cwd), 0);
	free(cwd);
	assert_true(s.is_dir);
	assert_int_equal(s.tasks.n, 5);
	/* strcmp order: upper case before lower, "a10" before "a2"; paths absolute. */
	assert_string_equal(strrchr(s.tasks.v[0], '/'), "/B.json");
	assert_string_equal(strrchr(s.tasks.v[1], '/'), "/a10.json");
	assert_string_equal(strrchr(s.tasks.v[2], '/'), "/a2.json");
	assert_string_equal(strrchr(s.tasks.v[3], '/'), "/b.json");
	assert_string_equal(strrchr(s.tasks.v[4], '/'), "/link.json");
	assert_true(s.tasks.v[0][0] == '/');
	suite_free(&s);
}

static void test_suite__jsonl_relative_to_file_and_errors(void **state)
{
	struct suite s;
	char why[SUITE_WHY_SIZE], want[256];
	const char *p, *task = NULL;

	(void)state;
	p = scratch_file("suite.jsonl", "\"t1/task.json\"\n\n  \n\"/abs/t2.json\"\r\n\"t3.json\"");
	assert_int_equal(suite_load(p, &s, why), 0);
	assert_false(s.is_dir);
	assert_int_equal(s.tasks.n, 3);
	snprintf(want, sizeof(want), "%s/t1/task.json", scratch_dir);
	assert_string_equal(s.tasks.v[0], want);
	assert_string_equal(s.tasks.v[1], "/abs/t2.json");
	assert_int_equal(suite_select(&s, 2, "SLURM_ARRAY_TASK_ID", &task, why), 0);
	assert_non_null(strstr(task, "/t3.json"));
	assert_int_equal(suite_select(&s, 3, "SLURM_ARRAY_TASK_ID", &task, why), -ERANGE);
	assert_non_null(strstr(why, "SLURM_ARRAY_TASK_ID: index 3 is out of range"));
	assert_non_null(strstr(why, "has 3 tasks (0 to 2)"));
	suite_free(&s);

	p = scratch_file("bad.jsonl", "\"a.json\"\n{\"task\": \"b.json\"}\n");
	assert_int_equal(suite_load(p, &s, why), -EINVAL);
	assert_non_null(strstr(why, "bad.jsonl:2: must be a JSON string"));
	p = scratch_file("nul.jsonl", "\"a\\u0000b\"\n");
	assert_int_equal(suite_load(p, &s, why), -EINVAL);
	assert_non_null(strstr(why, "nul.jsonl:1:"));
	p = scratch_file("empty.jsonl", "\n\n");
	assert_int_equal(suite_load(p, &s, why), -ENOENT);
	assert_non_null(strstr(why, "empty.jsonl: no tasks"));
	assert_int_equal(suite_load("/nonexistent/suite", &s, why), -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/suite: "));
}

/* The buffer parser (fuzzed by tests/fuzz/fuzz_suite.c): the same lines as a file, its limits
 * named, and nothing written to *ret on an error. */
static void test_suite__parse_lines_buffer_and_limits(void **state)
{
	static const char text[] = "\"t1/task.json\"\r\n\n \t\n\"/abs/t2.json\"\n\"t3.json\"";
	static const char line[4] = { '"', 'x', '"', '\n' };
	struct suite s, keep = { .path = (char *)"untouched" };
	char why[SUITE_WHY_SIZE], *big;
	size_t n;

	(void)state;
	assert_int_equal(suite_parse_lines("mem", "/s/suite.jsonl", text, sizeof(text) - 1, &s, why), 0);
	assert_false(s.is_dir);
	assert_string_equal(s.path, "mem");
	assert_int_equal(s.tasks.n, 3);
	assert_string_equal(s.tasks.v[0], "/s/t1/task.json");
	assert_string_equal(s.tasks.v[1], "/abs/t2.json");
	assert_string_equal(s.tasks.v[2], "/s/t3.json");
	suite_free(&s);
	/* A NUL byte is data: it ends neither the buffer nor the line, and no JSON string holds one. */
	s = keep;
	assert_int_equal(suite_parse_lines("mem", "/s/x", "\"a.json\"\n\"b\0.json\"\n", 17, &s, why), -EINVAL);
	assert_non_null(strstr(why, "mem:2: must be a JSON string"));
	assert_ptr_equal(s.path, keep.path);
	assert_int_equal(suite_parse_lines("mem", "/s/x", "", 0, &s, why), -ENOENT);
	assert_non_null(strstr(why, "mem: no tasks"));
	/* SUITE_MAX_LINE_BYTES: a line one byte longer is refused, with its number. */
	big = malloc(SUITE_MAX_LINE_BYTES + 8);
	assert_non_null(big);
	memset(big, 'a', SUITE_MAX_LINE_BYTES + 8);
	big[0] = '\n', big[1] = '"', big[SUITE_MAX_LINE_BYTES] = '"';
	assert_int_equal(suite_parse_lines("mem", "/s/x", big, SUITE_MAX_LINE_BYTES + 1, &s, why), 0);
	suite_free(&s);
	big[SUITE_MAX_LINE_BYTES] = 'a', big[SUITE_MAX_LINE_BYTES + 1] = '"';
	assert_int_equal(suite_parse_lines("mem", "/s/x", big, SUITE_MAX_LINE_BYTES + 2, &s, why), -EINVAL);
	assert_non_null(strstr(why, "mem:2: longer than 4096 bytes"));
	free(big);
	/* SUITE_MAX_TASKS lines load; one more is -E2BIG. "x"\n is 4 bytes a line. */
	n = 4 * ((size_t)SUITE_MAX_TASKS + 1);
	big = malloc(n);
	assert_non_null(big);
	for (size_t i = 0; i < n; i += sizeof(line))
		memcpy(big + i, line, sizeof(line));
	assert_int_equal(suite_parse_lines("mem", "/s/x", big, n - 4, &s, why), 0);
	assert_int_equal(s.tasks.n, SUITE_MAX_TASKS);
	suite_free(&s);
	s = keep;
	assert_int_equal(suite_parse_lines("mem", "/s/x", big, n, &s, why), -E2BIG);
	assert_non_null(strstr(why, "mem:100001: more than 100000 tasks"));
	assert_ptr_equal(s.path, keep.path);
	free(big);
	/* SUITE_MAX_FILE_BYTES: refused before a byte is read. */
	big = calloc(1, (size_t)SUITE_MAX_FILE_BYTES + 1);
	assert_non_null(big);
	assert_int_equal(suite_parse_lines("mem", "/s/x", big, (size_t)SUITE_MAX_FILE_BYTES + 1, &s, why), -EFBIG);
	assert_non_null(strstr(why, "mem: larger than 64 MiB"));
	free(big);
}

static void test_suite__task_id_read_ahead(void **state)
{
	char why[SUITE_WHY_SIZE], id[TASK_MAX_ID_LEN + 1];

	(void)state;
	/* An otherwise invalid task still has its id: it gets OUT/<id>/ and a config_error. */
	assert_int_equal(suite_task_id(scratch_file("t.json", "{\"id\":\"t-1\",\"bogus\":1}"), id, why), 0);
	assert_string_equal(id, "t-1");
	assert_int_equal(suite_task_id(scratch_file("u.json", "{\"id\":\"../x\"}"), id, why), -EINVAL);
	assert_non_null(strstr(why, "u.json: id: not a valid id"));
	assert_int_equal(suite_task_id(scratch_file("v.json", "not json"), id, why), -EINVAL);
	assert_non_null(strstr(why, "v.json: id: the file is not JSON"));
	assert_int_equal(suite_task_id(scratch_file("w.json", "{\"id\":7}"), id, why), -EINVAL);
	assert_non_null(strstr(why, "w.json: id: missing or not a string"));
}

static int prepare(const char *out, const char *id, const char *task, int *ret_exit, char status[32],
		   char why[SUITE_WHY_SIZE])
{
	int lock = -1, r = suite_prepare_out(out, id, task, &lock, ret_exit, status, why);

	if (r >= 0) {
		assert_true(lock >= 0);
		close(lock);
	}
	return r;
}

static void test_suite__out_fresh_done_moved(void **state)
{
	char out[128], why[SUITE_WHY_SIZE], status[32], p[256];
	int code = -1;

	(void)state;
	snprintf(out, sizeof(out), "%s/out", scratch_dir);
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_FRESH);
	snprintf(p, sizeof(p), "%s/t1", out);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_FRESH); /* empty */
	scratch_file("out/t1/result.json", "{\"task_file\":\"/s/t1.json\",\"status\":\"completed\",\"exit_code\":0}");
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_DONE);
	assert_int_equal(code, 0);
	assert_string_equal(status, "completed");
	/* The same id from another task file: two tasks share it. */
	assert_int_equal(prepare(out, "t1", "/s/other.json", &code, status, why), -EEXIST);
	assert_non_null(strstr(why, "two tasks of the suite have the id 't1'"));
	/* Exit 4 is final too; exit 3 asks for a retry: moved aside, then fresh. */
	scratch_file("out/t1/result.json",
		     "{\"task_file\":\"/s/t1.json\",\"status\":\"config_error\",\"exit_code\":4}");
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_DONE);
	assert_int_equal(code, 4);
	scratch_file("out/t1/result.json",
		     "{\"task_file\":\"/s/t1.json\",\"status\":\"isolation_failed\",\"exit_code\":3}");
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_MOVED);
	assert_non_null(strstr(why, "/out/.attempts/t1-"));
	assert_int_equal(access(p, F_OK), -1);
	/* A directory without result.json (the last start was killed) is moved aside too. */
	assert_int_equal(mkdir(p, 0755), 0);
	scratch_file("out/t1/task.json", "{}");
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_MOVED);
	/* A result.json that is not JSON is no final result. */
	assert_int_equal(mkdir(p, 0755), 0);
	scratch_file("out/t1/result.json", "{\"task_file\": trunc");
	assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_MOVED);
	/* Three moves (likely within one millisecond): three attempts kept, none replaced. */
	snprintf(p, sizeof(p), "ls %s/.attempts | wc -l | grep -qx 3", out);
	/* NOLINTNEXTLINE(cert-env33-c): a fixed command on the test's own scratch directory */
	assert_int_equal(system(p), 0);
}

static void test_suite__out_moves_in_one_millisecond_keep_every_attempt(void **state)
{
	char out[128], why[SUITE_WHY_SIZE], status[32], p[256];
	int code = -1;

	(void)state;
	snprintf(out, sizeof(out), "%s/out", scratch_dir);
	assert_int_equal(mkdir(out, 0755), 0);
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/t1", out);
		assert_int_equal(mkdir(p, 0755), 0);
		scratch_file("out/t1/task.json", "{}");
		assert_int_equal(prepare(out, "t1", "/s/t1.json", &code, status, why), SUITE_MOVED);
	}
	snprintf(p, sizeof(p), "ls %s/.attempts | wc -l | grep -qx 5", out);
	/* NOLINTNEXTLINE(cert-env33-c): a fixed command on the test's own scratch directory */
	assert_int_equal(system(p), 0);
}

static void test_suite__out_lock_is_close_on_exec(void **state)
{
	char out[128], why[SUITE_WHY_SIZE], status[32];
	int code, lock = -1;

	(void)state;
	snprintf(out, sizeof(out), "%s/out", scratch_dir);
	assert_int_equal(suite_prepare_out(out, "t1", "/s/t1.json", &lock, &code, status, why), SUITE_FRESH);
	assert_true(fcntl(lock, F_GETFD) & FD_CLOEXEC);
	close(lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suite__index_flag_wins_over_env),
		cmocka_unit_test(test_suite__index_errors_name_the_source),
		cmocka_unit_test_setup_teardown(test_suite__dir_byte_order_json_only, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_suite__jsonl_relative_to_file_and_errors, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_suite__parse_lines_buffer_and_limits),
		cmocka_unit_test_setup_teardown(test_suite__task_id_read_ahead, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_suite__out_fresh_done_moved, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_suite__out_moves_in_one_millisecond_keep_every_attempt,
						scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_suite__out_lock_is_close_on_exec, scratch_setup, scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
