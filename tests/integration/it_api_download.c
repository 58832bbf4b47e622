/* Reading a sandbox file to a local path (ocisbx_client_read_file_to_path):
 * every kind of destination. An outside probe, as root, turned the machine's
 * /dev/null into a regular file (the temporary file was renamed over the
 * device); a FIFO became a regular file too. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "emu_client.h"
#include "emu_fixture.h"
#include "ocisbx/api.h"
#include "par_run.h"

#define CONTENT "bytes from the sandbox\n"

typedef struct world {
    emu_fixture *emu;
    ocisbx_client *c;
    char sandbox[128];
    char dir[64];
} world;

static void check(int rc, const char *what)
{
    if (rc)
        fail_msg("%s: %s", what, ocisbx_error_message(ocisbx_error_last()));
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    emu_fixture_options o = {0};
    o.extra_yaml = "limits:\n  create_delay_ms: 10\n";
    if (emu_fixture_start(&o, &w->emu) != 0)
        return -1;
    if (emu_client_new(w->emu, 0, &w->c) != 0)
        return -1;
    if (emu_fixture_new_sandbox(w->emu, NULL, NULL, w->sandbox, sizeof w->sandbox) != 0)
        return -1;
    if (ocisbx_client_write_file(w->c, w->sandbox, "/workspace/f.txt", CONTENT, strlen(CONTENT), NULL) != 0)
        return -1;
    snprintf(w->dir, sizeof w->dir, "/tmp/ocisbx-dl-XXXXXX");
    if (!mkdtemp(w->dir))
        return -1;
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
    int rc = system(cmd);
    ocisbx_client_free(w->c);
    int st = emu_fixture_stop(w->emu);
    emu_fixture_free(w->emu);
    free(w);
    return st == 0 && rc == 0 ? 0 : -1;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static const char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void regular_and_missing_files(void **state)
{
    world *w = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/out.txt", w->dir);
    check(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/f.txt", path), "read to a new file");
    assert_string_equal(slurp(path), CONTENT);
    /* a failed read (404) leaves the good file and nothing beside it */
    assert_int_equal(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/missing", path), OCISBX_ENOTFOUND);
    assert_string_equal(slurp(path), CONTENT);
    assert_int_equal(entries(w->dir), 1);
    unlink(path);
}

static void symlink_destination_is_followed(void **state)
{
    world *w = *state;
    char target[128], link[128];
    snprintf(target, sizeof target, "%s/real.txt", w->dir);
    snprintf(link, sizeof link, "%s/link.txt", w->dir);
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    assert_int_equal(symlink(target, link), 0);
    check(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/f.txt", link), "read to a link");
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp(target), CONTENT);
    unlink(link);
    unlink(target);
}

static void *drain(void *arg)
{
    static char got[256];
    int fd = open(arg, O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t n, total = 0;
    while ((n = read(fd, got + total, sizeof got - 1 - (size_t)total)) > 0)
        total += n;
    close(fd);
    got[total] = 0;
    return got;
}

static void fifo_destination_is_written_through(void **state)
{
    world *w = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/fifo", w->dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, drain, path), 0);
    check(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/f.txt", path), "read to a FIFO");
    void *got;
    pthread_join(t, &got);
    assert_non_null(got);
    assert_string_equal(got, CONTENT);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(path);
}

static void device_destination_stays_a_device(void **state)
{
    world *w = *state;
    if (geteuid() != 0)
        skip(); /* mknod needs root; CI runs as root */
    char path[128];
    snprintf(path, sizeof path, "%s/null", w->dir);
    assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
    check(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/f.txt", path), "read to a device");
    assert_int_equal(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/missing", path), OCISBX_ENOTFOUND);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(major(st.st_rdev), 1);
    assert_int_equal(minor(st.st_rdev), 3);
    assert_int_equal(entries(w->dir), 1);
    unlink(path);
}

static void directory_destination_is_refused(void **state)
{
    world *w = *state;
    assert_int_equal(ocisbx_client_read_file_to_path(w->c, w->sandbox, "/workspace/f.txt", w->dir), OCISBX_EINVAL);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "is a directory"));
}

/* An optional cap: a larger file fails naming the limit, and nothing of it
 * is kept (the old file stays). A read into memory has a cap by default. */
static void download_cap(void **state)
{
    world *w = *state;
    ocisbx_client *small = NULL;
    check(emu_client_new_limited(w->emu, 0, 10, &small), "client");
    char path[128];
    snprintf(path, sizeof path, "%s/capped.txt", w->dir);
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    assert_int_equal(ocisbx_client_read_file_to_path(small, w->sandbox, "/workspace/f.txt", path), OCISBX_ETOOLARGE);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "10 bytes"));
    assert_string_equal(slurp(path), "old");
    assert_int_equal(entries(w->dir), 1);
    static unsigned char sentinel_byte = 1;
    unsigned char *data = &sentinel_byte;
    size_t len = 7;
    assert_int_equal(ocisbx_client_read_file(small, w->sandbox, "/workspace/f.txt", &data, &len), OCISBX_ETOOLARGE);
    assert_null(data);
    ocisbx_client_free(small);
    check(ocisbx_client_read_file(w->c, w->sandbox, "/workspace/f.txt", &data, &len), "read into memory");
    assert_int_equal(len, strlen(CONTENT));
    ocisbx_free(data);
    unlink(path);
}

int main(void)
{
    alarm(300); /* a FIFO nobody writes would block its reader for ever */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regular_and_missing_files),           cmocka_unit_test(symlink_destination_is_followed),
        cmocka_unit_test(fifo_destination_is_written_through), cmocka_unit_test(device_destination_stays_a_device),
        cmocka_unit_test(directory_destination_is_refused),    cmocka_unit_test(download_cap),
    };
    return par_run_group_tests_name("it_api_download", tests, setup, teardown);
}
