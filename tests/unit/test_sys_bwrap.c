/* The bubblewrap command line (src/sys/bwrap_args.h) and the seccomp filter
 * (src/sys/seccomp.h), without running either: the exact argv of an
 * ordinary run, what the host-root mode adds (the /proc tables covered,
 * the /etc view in place of /etc), what detach and the network change; the
 * /etc view of a fixture (shadow files, SSH host keys, TLS private keys and
 * what others cannot read left out, the rest bound, symlinks kept, parents
 * before children); the host's top directories; and the filter, run by a
 * small cBPF interpreter over system calls with chosen arguments. */
/* O_TMPFILE */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/seccomp.h>

#include "ocisbx/common.h"
#include "sys/bwrap_args.h"
#include "sys/seccomp.h"
#include "test_assert.h"

/* ---- the argv ------------------------------------------------------------------- */

static char *join(char **v)
{
    size_t len = 1;
    for (size_t i = 0; v[i]; i++)
        len += strlen(v[i]) + 1;
    char *s = calloc(1, len);
    assert_non_null(s);
    for (size_t i = 0; v[i]; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, v[i]);
    }
    return s;
}

static ocisbx_bw_entry ent(ocisbx_bw_kind kind, const char *dest, const char *src)
{
    ocisbx_bw_entry e = {kind, strdup(dest), src ? strdup(src) : NULL};
    assert_non_null(e.dest);
    return e;
}

/* An owned list of n entries (ocisbx_bw_list_free). */
static ocisbx_bw_list list_of(const ocisbx_bw_entry *v, size_t n)
{
    ocisbx_bw_list l = {calloc(n, sizeof *v), n, n};
    assert_non_null(l.v);
    memcpy(l.v, v, n * sizeof *v);
    return l;
}

static ocisbx_bw_list k_dir_list;

static ocisbx_bwrap_opts base_opts(void)
{
    if (!k_dir_list.n) {
        ocisbx_bw_entry d[] = {ent(OCISBX_BW_LINK, "/bin", "usr/bin"), ent(OCISBX_BW_BIND, "/lib64", "/lib64")};
        k_dir_list = list_of(d, 2);
    }
    ocisbx_bwrap_opts o = {.bwrap = "/usr/bin/bwrap",
                           .workspace_src = "/srv/ws",
                           .cwd = "/workspace/sub",
                           .shell_command = "echo 'hi there'",
                           .host_dirs = &k_dir_list,
                           .info_fd = "3",
                           .seccomp_fd = "5"};
    return o;
}

static void t_argv_plain(void **state)
{
    (void)state;
    ocisbx_bwrap_opts o = base_opts();
    char **v = NULL;
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), 0);
    char *s = join(v);
    assert_string_equal(s, "/usr/bin/bwrap --unshare-user --uid 0 --gid 0 --disable-userns --unshare-pid "
                           "--unshare-ipc --unshare-uts --hostname sandbox --die-with-parent --new-session "
                           "--cap-drop ALL --ro-bind /usr /usr --unshare-net --symlink usr/bin /bin "
                           "--ro-bind /lib64 /lib64 --ro-bind /etc /etc --proc /proc --dev /dev "
                           "--remount-ro /dev --tmpfs /tmp --remount-ro /tmp --info-fd 3 --seccomp 5 "
                           "--bind /srv/ws /workspace --remount-ro / --chdir /workspace/sub /bin/sh -c "
                           "echo 'hi there'");
    /* the command is one word, as given */
    size_t n = 0;
    while (v[n])
        n++;
    assert_string_equal(v[n - 1], "echo 'hi there'");
    free(s);
    ocisbx_strv_free(v, false);
}

static bool has_seq(char **v, const char *a, const char *b, const char *c)
{
    for (size_t i = 0; v[i] && v[i + 1]; i++)
        if (strcmp(v[i], a) == 0 && strcmp(v[i + 1], b) == 0 && (!c || (v[i + 2] && strcmp(v[i + 2], c) == 0)))
            return true;
    return false;
}

static long index_of(char **v, const char *a)
{
    for (long i = 0; v[i]; i++)
        if (strcmp(v[i], a) == 0)
            return i;
    return -1;
}

static void t_argv_host_root(void **state)
{
    (void)state;
    ocisbx_bw_entry etc[] = {
        ent(OCISBX_BW_DIR, "/etc", NULL),
        ent(OCISBX_BW_BIND, "/etc/passwd", "/etc/passwd"),
        ent(OCISBX_BW_LINK, "/etc/mtab", "../proc/self/mounts"),
    };
    ocisbx_bw_list etc_list = list_of(etc, 3);
    ocisbx_bwrap_opts o = base_opts();
    o.host_root = true;
    char **v = NULL;
    /* without a view of /etc: refused */
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), OCISBX_EINVAL);
    assert_null(v);
    o.etc_view = &etc_list;
    o.allow_network = true;
    o.detach = true;
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), 0);
    assert_false(has_seq(v, "--ro-bind", "/etc", "/etc"));
    assert_true(has_seq(v, "--dir", "/etc", NULL));
    assert_true(has_seq(v, "--ro-bind", "/etc/passwd", "/etc/passwd"));
    assert_true(has_seq(v, "--symlink", "../proc/self/mounts", "/etc/mtab"));
    assert_true(index_of(v, "--dir") < index_of(v, "/etc/passwd")); /* the directory first */
    const char *covered[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/mtrr"};
    long proc_at = index_of(v, "--proc");
    assert_true(proc_at > 0);
    for (size_t i = 0; i < sizeof covered / sizeof *covered; i++) {
        assert_true(has_seq(v, "--ro-bind-try", covered[i], covered[i]));
        assert_true(index_of(v, covered[i]) > proc_at); /* over the new /proc */
    }
    /* the rest as always: no capability, its own user namespace, nothing nested */
    assert_true(has_seq(v, "--cap-drop", "ALL", NULL));
    assert_true(has_seq(v, "--uid", "0", NULL));
    assert_true(index_of(v, "--disable-userns") > 0);
    assert_true(has_seq(v, "--remount-ro", "/", NULL));
    /* network allowed, detached */
    assert_int_equal(index_of(v, "--unshare-net"), -1);
    assert_int_equal(index_of(v, "--die-with-parent"), -1);
    ocisbx_strv_free(v, false);
    /* a staged view (the runner's overlay) in place of the list */
    o = base_opts();
    o.host_root = true;
    o.etc_src = "/etc";
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), OCISBX_EINVAL); /* the host's /etc whole: never as root */
    o.etc_src = "/tmp/etc";
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), 0);
    assert_true(has_seq(v, "--ro-bind", "/tmp/etc", "/etc"));
    assert_true(has_seq(v, "--ro-bind-try", "/proc/sys", "/proc/sys"));
    ocisbx_strv_free(v, false);
    /* and the ordinary run has none of the covers */
    o = base_opts();
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), 0);
    assert_int_equal(index_of(v, "--ro-bind-try"), -1);
    ocisbx_strv_free(v, false);
    o.cwd = NULL;
    assert_int_equal(ocisbx_bwrap_argv(&o, &v), OCISBX_EINVAL);
    ocisbx_bw_list_free(&etc_list);
    ocisbx_bw_list_free(&k_dir_list);
}

/* ---- the /etc view ------------------------------------------------------------------ */

static void t_etc_hides(void **state)
{
    (void)state;
    assert_true(ocisbx_bwrap_etc_hides("shadow", S_IFREG | 0644));
    assert_true(ocisbx_bwrap_etc_hides("gshadow", S_IFREG | 0644));
    assert_true(ocisbx_bwrap_etc_hides("shadow-", S_IFREG | 0644));
    assert_true(ocisbx_bwrap_etc_hides("ssh/ssh_host_ed25519_key", S_IFREG | 0600));
    assert_true(ocisbx_bwrap_etc_hides("ssh/ssh_host_rsa_key.pub", S_IFREG | 0644));
    assert_true(ocisbx_bwrap_etc_hides("ssl/private", S_IFDIR | 0755));
    assert_true(ocisbx_bwrap_etc_hides("pki/tls/private", S_IFDIR | 0755));
    assert_true(ocisbx_bwrap_etc_hides("anything", S_IFREG | 0640)); /* others cannot read it */
    assert_true(ocisbx_bwrap_etc_hides("sudoers.d", S_IFDIR | 0750));
    assert_true(ocisbx_bwrap_etc_hides("odd", S_IFDIR | 0744)); /* readable, not searchable */
    assert_false(ocisbx_bwrap_etc_hides("passwd", S_IFREG | 0644));
    assert_false(ocisbx_bwrap_etc_hides("ssh/ssh_config", S_IFREG | 0644));
    assert_false(ocisbx_bwrap_etc_hides("ssl/certs", S_IFDIR | 0755));
    assert_false(ocisbx_bwrap_etc_hides("ssl/openssl.cnf", S_IFREG | 0644));
    assert_false(ocisbx_bwrap_etc_hides("mtab", S_IFLNK | 0777));
    assert_false(ocisbx_bwrap_etc_hides("xshadow", S_IFREG | 0644));
}

static char g_fx[64];

static void put(const char *rel, mode_t mode)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", g_fx, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x\n", 2), 2);
    close(fd);
    assert_int_equal(chmod(p, mode), 0);
}

static void dir(const char *rel, mode_t mode)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", g_fx, rel);
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(chmod(p, mode), 0);
}

/* The entry for dest, or NULL; also checks its parent comes before it. */
static const ocisbx_bw_entry *find(const ocisbx_bw_list *l, const char *dest)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i].dest, dest) != 0)
            continue;
        const char *slash = strrchr(dest, '/');
        size_t pl = (size_t)(slash - dest);
        bool parent_first = pl == 0;
        for (size_t k = 0; k < i && !parent_first; k++)
            parent_first = l->v[k].kind == OCISBX_BW_DIR && strlen(l->v[k].dest) == pl &&
                           strncmp(l->v[k].dest, dest, pl) == 0;
        assert_true(parent_first);
        return &l->v[i];
    }
    return NULL;
}

static void expect(const ocisbx_bw_list *l, const char *dest, ocisbx_bw_kind kind, const char *src_rel)
{
    const ocisbx_bw_entry *e = find(l, dest);
    if (!e)
        fail_msg("%s is not in the view", dest);
    assert_int_equal(e->kind, kind);
    if (kind == OCISBX_BW_BIND) {
        char want[256];
        snprintf(want, sizeof want, "%s/%s", g_fx, src_rel);
        assert_string_equal(e->src, want);
    } else if (kind == OCISBX_BW_LINK) {
        assert_string_equal(e->src, src_rel);
    }
}

static void rm_fx(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_fx);
    assert_int_equal(system(cmd), 0);
}

static void t_etc_view(void **state)
{
    (void)state;
    snprintf(g_fx, sizeof g_fx, "/tmp/test_sys_bwrap_XXXXXX");
    assert_non_null(mkdtemp(g_fx));
    assert_int_equal(chmod(g_fx, 0755), 0);
    put("passwd", 0644);
    put("shadow", 0640);
    put("gshadow-", 0640);
    dir("ssh", 0755);
    put("ssh/ssh_config", 0644);
    put("ssh/ssh_host_ed25519_key", 0600);
    put("ssh/ssh_host_ed25519_key.pub", 0644);
    dir("ssl", 0755);
    dir("ssl/certs", 0755);
    put("ssl/certs/ca.pem", 0644);
    dir("ssl/private", 0710);
    put("ssl/private/server.key", 0600);
    dir("app", 0755);
    dir("app/deep", 0755);
    put("app/deep/token", 0600);
    put("app/deep/settings", 0644);
    dir("plain", 0755);
    put("plain/a.conf", 0644);
    char p[256];
    snprintf(p, sizeof p, "%s/localtime", g_fx);
    assert_int_equal(symlink("/usr/share/zoneinfo/UTC", p), 0);
    snprintf(p, sizeof p, "%s/fifo", g_fx);
    assert_int_equal(mkfifo(p, 0644), 0);

    ocisbx_bw_list l;
    assert_int_equal(ocisbx_bwrap_scan_etc(g_fx, &l), 0);
    expect(&l, "/etc", OCISBX_BW_DIR, NULL);
    expect(&l, "/etc/passwd", OCISBX_BW_BIND, "passwd");
    expect(&l, "/etc/ssh", OCISBX_BW_DIR, NULL);
    expect(&l, "/etc/ssh/ssh_config", OCISBX_BW_BIND, "ssh/ssh_config");
    expect(&l, "/etc/ssl", OCISBX_BW_DIR, NULL);
    expect(&l, "/etc/ssl/certs", OCISBX_BW_BIND, "ssl/certs"); /* nothing hidden: whole */
    expect(&l, "/etc/app", OCISBX_BW_DIR, NULL);
    expect(&l, "/etc/app/deep", OCISBX_BW_DIR, NULL);
    expect(&l, "/etc/app/deep/settings", OCISBX_BW_BIND, "app/deep/settings");
    expect(&l, "/etc/plain", OCISBX_BW_BIND, "plain");
    expect(&l, "/etc/localtime", OCISBX_BW_LINK, "/usr/share/zoneinfo/UTC");
    const char *absent[] = {"/etc/shadow",
                            "/etc/gshadow-",
                            "/etc/ssh/ssh_host_ed25519_key",
                            "/etc/ssh/ssh_host_ed25519_key.pub",
                            "/etc/ssl/private",
                            "/etc/ssl/private/server.key",
                            "/etc/app/deep/token",
                            "/etc/plain/a.conf", /* inside a whole bind: not listed itself */
                            "/etc/fifo"};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        assert_null(find(&l, absent[i]));
    assert_int_equal(l.n, 11);
    ocisbx_bw_list_free(&l);

    /* nothing to leave out: /etc bound whole */
    rm_fx();
    assert_non_null(mkdtemp(strcpy(g_fx, "/tmp/test_sys_bwrap_XXXXXX")));
    assert_int_equal(chmod(g_fx, 0755), 0);
    put("passwd", 0644);
    assert_int_equal(ocisbx_bwrap_scan_etc(g_fx, &l), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.v[0].kind, OCISBX_BW_BIND);
    assert_string_equal(l.v[0].dest, "/etc");
    assert_string_equal(l.v[0].src, g_fx);
    ocisbx_bw_list_free(&l);
    rm_fx();
    /* a missing /etc: an error naming it */
    assert_int_equal(ocisbx_bwrap_scan_etc("/nonexistent-etc-for-test", &l), OCISBX_EIO);
    assert_non_null(strstr(ocisbx_error_message(ocisbx_error_last()), "/nonexistent-etc-for-test"));
    assert_int_equal(l.n, 0);
}

static void t_host_dirs(void **state)
{
    (void)state;
    snprintf(g_fx, sizeof g_fx, "/tmp/test_sys_bwrap_XXXXXX");
    assert_non_null(mkdtemp(g_fx));
    char p[256];
    snprintf(p, sizeof p, "%s/bin", g_fx);
    assert_int_equal(symlink("usr/bin", p), 0);
    dir("lib", 0755);
    dir("lib64", 0755);
    ocisbx_bw_list l;
    assert_int_equal(ocisbx_bwrap_scan_host_dirs(g_fx, &l), 0);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.v[0].kind, OCISBX_BW_LINK);
    assert_string_equal(l.v[0].dest, "/bin");
    assert_string_equal(l.v[0].src, "usr/bin");
    assert_int_equal(l.v[1].kind, OCISBX_BW_BIND);
    assert_string_equal(l.v[1].dest, "/lib");
    snprintf(p, sizeof p, "%s/lib", g_fx);
    assert_string_equal(l.v[1].src, p);
    assert_string_equal(l.v[2].dest, "/lib64");
    ocisbx_bw_list_free(&l);
    rm_fx();
}

static bool strv_has(char **v, const char *s)
{
    for (size_t i = 0; v && v[i]; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

static void t_etc_hidden(void **state)
{
    (void)state;
    snprintf(g_fx, sizeof g_fx, "/tmp/test_sys_bwrap_XXXXXX");
    assert_non_null(mkdtemp(g_fx));
    put("passwd", 0644);
    put("shadow", 0640);
    dir("ssh", 0755);
    put("ssh/ssh_config", 0644);
    put("ssh/ssh_host_rsa_key", 0600);
    dir("ssl", 0755);
    dir("ssl/private", 0700);
    put("ssl/private/k.pem", 0600);
    dir("app", 0755);
    dir("app/deep", 0755);
    put("app/deep/token", 0600);
    char **h = NULL;
    assert_int_equal(ocisbx_bwrap_scan_etc_hidden(g_fx, &h), 0);
    size_t n = 0;
    while (h[n])
        n++;
    assert_int_equal(n, 4);
    assert_true(strv_has(h, "shadow"));
    assert_true(strv_has(h, "ssh/ssh_host_rsa_key"));
    assert_true(strv_has(h, "ssl/private")); /* not also what is inside it */
    assert_true(strv_has(h, "app/deep/token"));
    ocisbx_strv_free(h, false);
    rm_fx();
    assert_int_equal(ocisbx_bwrap_scan_etc_hidden("/nonexistent-etc-for-test", &h), OCISBX_EIO);
    assert_null(h);
}

static void t_etc_submounts(void **state)
{
    (void)state;
    char path[] = "/tmp/test_sys_bwrap_mi_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *mi = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
                     "30 22 254:0 /docker/hosts /etc/hosts rw - ext4 /dev/vda rw\n"
                     "31 22 254:0 /x /etc/with\\040space rw - ext4 /dev/vda rw\n"
                     "32 22 0:5 / /etcetera rw - tmpfs none rw\n"
                     "33 22 0:6 / /etc rw - tmpfs none rw\n"
                     "34 22 254:0 /docker/resolv /etc/resolv.conf rw - ext4 /dev/vda rw\n";
    assert_int_equal(write(fd, mi, strlen(mi)), (ssize_t)strlen(mi));
    close(fd);
    char **v = NULL;
    assert_int_equal(ocisbx_bwrap_etc_submounts(path, &v), 0);
    assert_non_null(v[0]);
    assert_string_equal(v[0], "hosts");
    assert_string_equal(v[1], "with space");
    assert_string_equal(v[2], "resolv.conf"); /* not /etcetera, not /etc itself */
    assert_null(v[3]);
    ocisbx_strv_free(v, false);
    unlink(path);
    assert_int_equal(ocisbx_bwrap_etc_submounts(path, &v), OCISBX_EIO);
}

/* ---- the filter, run by a cBPF interpreter --------------------------------------- */

/* Runs prog over d: the filter's return value. Only the instructions the
 * builder uses; anything else fails the test. */
static uint32_t run_bpf(const struct sock_filter *prog, size_t n, const struct seccomp_data *d)
{
    uint32_t a = 0;
    for (size_t pc = 0; pc < n; pc++) {
        const struct sock_filter *f = &prog[pc];
        switch (f->code) {
        case BPF_LD | BPF_W | BPF_ABS:
            assert_true(f->k + 4 <= sizeof *d && f->k % 4 == 0);
            memcpy(&a, (const char *)d + f->k, 4);
            break;
        case BPF_ALU | BPF_AND | BPF_K: a &= f->k; break;
        case BPF_JMP | BPF_JEQ | BPF_K: pc += a == f->k ? f->jt : f->jf; break;
        case BPF_JMP | BPF_JGE | BPF_K: pc += a >= f->k ? f->jt : f->jf; break;
        case BPF_JMP | BPF_JSET | BPF_K: pc += (a & f->k) ? f->jt : f->jf; break;
        case BPF_RET | BPF_K: return f->k;
        default: fail_msg("instruction %zu: code 0x%x", pc, f->code);
        }
    }
    fail_msg("the filter runs off its end");
    return 0;
}

static struct sock_filter g_prog[OCISBX_SECCOMP_MAX_INSNS];
static size_t g_n;

static uint32_t call(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
    struct seccomp_data d;
    memset(&d, 0, sizeof d);
    d.nr = (int)nr;
#if defined(__x86_64__)
    d.arch = AUDIT_ARCH_X86_64;
#else
    d.arch = AUDIT_ARCH_AARCH64;
#endif
    d.args[0] = a0;
    d.args[1] = a1;
    d.args[2] = a2;
    d.args[3] = a3;
    return run_bpf(g_prog, g_n, &d);
}

#define ALLOW SECCOMP_RET_ALLOW
#define EPERM_RET (SECCOMP_RET_ERRNO | EPERM)

static void t_filter_plain(void **state)
{
    (void)state;
    g_n = ocisbx_seccomp_build(false, g_prog, OCISBX_SECCOMP_MAX_INSNS);
    assert_true(g_n > 0);
    assert_int_equal(call(SYS_ptrace, 0, 0, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_getpid, 0, 0, 0, 0), ALLOW);
    /* the host-root rules are not there */
    assert_int_equal(call(SYS_fchmodat, (uint64_t)AT_FDCWD, 0, 04755, 0), ALLOW);
    assert_int_equal(call(SYS_keyctl, 0, 0, 0, 0), ALLOW);
    /* another architecture: refused whatever the call */
    struct seccomp_data d;
    memset(&d, 0, sizeof d);
    d.arch = AUDIT_ARCH_I386;
    d.nr = (int)SYS_getpid;
    assert_int_equal(run_bpf(g_prog, g_n, &d), EPERM_RET);
#if defined(__x86_64__)
    assert_int_equal(call(0x40000000L | SYS_getpid, 0, 0, 0, 0), EPERM_RET); /* x32 */
#endif
    /* too small a buffer: 0, nothing half-built used */
    struct sock_filter small[4];
    assert_int_equal(ocisbx_seccomp_build(false, small, 4), 0);
}

static void t_filter_host_root(void **state)
{
    (void)state;
    g_n = ocisbx_seccomp_build(true, g_prog, OCISBX_SECCOMP_MAX_INSNS);
    assert_true(g_n > 0);
    uint64_t cwd = (uint64_t)(int64_t)AT_FDCWD;
    assert_int_equal(call(SYS_ptrace, 0, 0, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_fchmodat, cwd, 0, 0755, 0), ALLOW);
    assert_int_equal(call(SYS_fchmodat, cwd, 0, 04755, 0), EPERM_RET);
    assert_int_equal(call(SYS_fchmodat, cwd, 0, 02755, 0), EPERM_RET);
    assert_int_equal(call(SYS_fchmod, 3, 06000, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_fchmod, 3, 01777, 0, 0), ALLOW); /* sticky is fine */
    assert_int_equal(call(452 /* fchmodat2 */, cwd, 0, 04000, 0), EPERM_RET);
#ifdef SYS_chmod
    assert_int_equal(call(SYS_chmod, 0, 04755, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_chmod, 0, 0644, 0, 0), ALLOW);
#endif
    /* the upper half of the argument is not the mode */
    assert_int_equal(call(SYS_fchmodat, cwd, 0, 0x100000000ull | 0755, 0), ALLOW);
    assert_int_equal(call(SYS_mkdirat, cwd, 0, 02755, 0), EPERM_RET);
    assert_int_equal(call(SYS_mkdirat, cwd, 0, 0755, 0), ALLOW);
    assert_int_equal(call(SYS_openat, cwd, 0, O_WRONLY | O_CREAT, 04755), EPERM_RET);
    assert_int_equal(call(SYS_openat, cwd, 0, O_WRONLY | O_CREAT, 0644), ALLOW);
    assert_int_equal(call(SYS_openat, cwd, 0, O_RDONLY, 04755), ALLOW); /* no creation: mode unused */
    assert_int_equal(call(SYS_openat, cwd, 0, O_RDWR | O_TMPFILE, 02644), EPERM_RET);
#ifdef SYS_open
    assert_int_equal(call(SYS_open, 0, O_CREAT, 04700, 0), EPERM_RET);
#endif
    assert_int_equal(call(SYS_mknodat, cwd, 0, S_IFCHR | 0600, 0x103), EPERM_RET);
    assert_int_equal(call(SYS_mknodat, cwd, 0, S_IFBLK | 0600, 0x700), EPERM_RET);
    assert_int_equal(call(SYS_mknodat, cwd, 0, S_IFREG | 04644, 0), EPERM_RET);
    assert_int_equal(call(SYS_mknodat, cwd, 0, S_IFIFO | 0644, 0), ALLOW);
    assert_int_equal(call(SYS_mknodat, cwd, 0, S_IFSOCK | 0644, 0), ALLOW);
    assert_int_equal(call(437 /* openat2 */, cwd, 0, 0, 0), SECCOMP_RET_ERRNO | ENOSYS);
    assert_int_equal(call(425 /* io_uring_setup */, 8, 0, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_keyctl, 0, 0, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_add_key, 0, 0, 0, 0), EPERM_RET);
    assert_int_equal(call(SYS_getpid, 0, 0, 0, 0), ALLOW);
    assert_int_equal(call(SYS_write, 1, 0, 04755, 0), ALLOW);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_argv_plain),       cmocka_unit_test(t_argv_host_root), cmocka_unit_test(t_etc_hides),
        cmocka_unit_test(t_etc_view),         cmocka_unit_test(t_host_dirs),      cmocka_unit_test(t_filter_plain),
        cmocka_unit_test(t_filter_host_root), cmocka_unit_test(t_etc_hidden),     cmocka_unit_test(t_etc_submounts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
