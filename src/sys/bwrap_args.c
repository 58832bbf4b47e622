/* The bubblewrap command line (see bwrap_args.h): the pure builder, and the
 * two scans of the host it is given. */
#include "sys/bwrap_args.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/internal.h"

#define SANDBOX_WS "/workspace"

void ocisbx_strv_free(char **v, bool secret)
{
    if (!v)
        return;
    for (size_t i = 0; v[i]; i++) {
        if (secret)
            ocisbx_free_secret(v[i]);
        else
            free(v[i]);
    }
    free(v);
}

/* ---- the argv ---------------------------------------------------------------------- */

typedef struct strv {
    char **v;
    size_t n, cap;
    bool failed;
} strv;

static void push(strv *s, const char *str)
{
    char *copy = s->failed ? NULL : ocisbx_strdup(str);
    if (!copy) {
        s->failed = true;
        return;
    }
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) {
            s->failed = true;
            free(copy);
            return;
        }
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = copy;
    s->v[s->n] = NULL;
}

static void push_all(strv *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        push(s, list[i]);
}

static void push_entries(strv *s, const ocisbx_bw_list *l)
{
    for (size_t i = 0; l && i < l->n; i++) {
        const ocisbx_bw_entry *e = &l->v[i];
        if (e->kind == OCISBX_BW_DIR) {
            push(s, "--dir");
        } else {
            push(s, e->kind == OCISBX_BW_BIND ? "--ro-bind" : "--symlink");
            push(s, e->src);
        }
        push(s, e->dest);
    }
}

/* As host root the kernel grants these by uid (0): never writable. Taken
 * from the host's /proc (the same kernel tables), where present. */
static const char *const k_proc_covers[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus",
                                            "/proc/fs",  "/proc/mtrr"};

int ocisbx_bwrap_argv(const ocisbx_bwrap_opts *o, char ***out)
{
    *out = NULL;
    if (!o || !o->bwrap || !o->workspace_src || !o->cwd || !o->shell_command || !o->info_fd || !o->seccomp_fd)
        return ocisbx_fail(OCISBX_EINVAL, "bwrap argv: an option is missing");
    const char *etc_src = o->etc_src ? o->etc_src : "/etc";
    if (o->host_root && !o->etc_view && strcmp(etc_src, "/etc") == 0)
        return ocisbx_fail(OCISBX_EINVAL, "bwrap argv: as host root /etc must be a view");
    strv a = {0};
    push(&a, o->bwrap);
    /* A user namespace on top of the dropped capabilities: the read-only
     * mounts become locked, so not even a capability regained inside could
     * remount them writable; --disable-userns stops nesting another one. */
    static const char *const ns[] = {
        "--unshare-user", "--uid",         "0",          "--gid",   "0", "--disable-userns", "--unshare-pid",
        "--unshare-ipc",  "--unshare-uts", "--hostname", "sandbox", NULL};
    push_all(&a, ns);
    if (!o->detach)
        push(&a, "--die-with-parent");
    static const char *const caps[] = {"--new-session", "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr", NULL};
    push_all(&a, caps);
    if (!o->allow_network)
        push(&a, "--unshare-net");
    push_entries(&a, o->host_dirs);
    if (o->etc_view) {
        push_entries(&a, o->etc_view);
    } else {
        push(&a, "--ro-bind");
        push(&a, etc_src);
        push(&a, "/etc");
    }
    static const char *const proc[] = {"--proc", "/proc", NULL};
    push_all(&a, proc);
    for (size_t i = 0; o->host_root && i < sizeof k_proc_covers / sizeof *k_proc_covers; i++) {
        push(&a, "--ro-bind-try");
        push(&a, k_proc_covers[i]);
        push(&a, k_proc_covers[i]);
    }
    static const char *const rest[] = {"--dev", "/dev",         "--remount-ro", "/dev",      "--tmpfs",
                                       "/tmp",  "--remount-ro", "/tmp",         "--info-fd", NULL};
    push_all(&a, rest);
    push(&a, o->info_fd);
    push(&a, "--seccomp");
    push(&a, o->seccomp_fd);
    push(&a, "--bind");
    push(&a, o->workspace_src);
    push(&a, SANDBOX_WS);
    /* bwrap's root is a writable tmpfs: /workspace must be the only
     * writable place, so it goes read-only once everything is mounted */
    static const char *const tail[] = {"--remount-ro", "/", "--chdir", NULL};
    push_all(&a, tail);
    push(&a, o->cwd);
    push(&a, "/bin/sh");
    push(&a, "-c");
    push(&a, o->shell_command);
    if (a.failed) {
        ocisbx_strv_free(a.v, false);
        return ocisbx_fail_nomem();
    }
    *out = a.v;
    return 0;
}

/* ---- the lists ------------------------------------------------------------------------ */

void ocisbx_bw_list_free(ocisbx_bw_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].dest);
        free(l->v[i].src);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Appends an entry (dest and src copied; src may be NULL). */
static int list_add(ocisbx_bw_list *l, ocisbx_bw_kind kind, const char *dest, const char *src)
{
    if (l->n >= OCISBX_BW_ETC_MAX_ENTRIES)
        return ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: more than %d entries to mount", OCISBX_BW_ETC_MAX_ENTRIES);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        ocisbx_bw_entry *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv)
            return ocisbx_fail_nomem();
        l->v = nv;
        l->cap = cap;
    }
    ocisbx_bw_entry e = {kind, ocisbx_strdup(dest), src ? ocisbx_strdup(src) : NULL};
    if (!e.dest || (src && !e.src)) {
        free(e.dest);
        free(e.src);
        return ocisbx_fail_nomem();
    }
    l->v[l->n++] = e;
    return 0;
}

/* Drops the entries from index keep on. */
static void list_truncate(ocisbx_bw_list *l, size_t keep)
{
    while (l->n > keep) {
        l->n--;
        free(l->v[l->n].dest);
        free(l->v[l->n].src);
    }
}

/* ---- the host's top directories ------------------------------------------------------------ */

/* A symlink's target (NUL-terminated in buf), or -1. */
static int read_link(const char *path, char *buf, size_t len)
{
    ssize_t n = readlink(path, buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return -1;
    buf[n] = '\0';
    return 0;
}

int ocisbx_bwrap_scan_host_dirs(const char *host_root_dir, ocisbx_bw_list *out)
{
    static const char *const dirs[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    memset(out, 0, sizeof *out);
    const char *base = host_root_dir ? host_root_dir : "";
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char path[PATH_MAX], target[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s%s", base, dirs[i]) >= sizeof path)
            continue;
        struct stat st;
        int rc = 0;
        if (lstat(path, &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode) && read_link(path, target, sizeof target) == 0)
            rc = list_add(out, OCISBX_BW_LINK, dirs[i], target);
        else if (S_ISDIR(st.st_mode))
            rc = list_add(out, OCISBX_BW_BIND, dirs[i], path);
        if (rc) {
            ocisbx_bw_list_free(out);
            return rc;
        }
    }
    return 0;
}

/* ---- the /etc view ----------------------------------------------------------------------- */

bool ocisbx_bwrap_etc_hides(const char *rel, unsigned mode)
{
    static const char *const named[] = {"shadow",         "shadow-",     "gshadow",         "gshadow-",
                                        "ssh/ssh_host_*", "ssl/private", "pki/tls/private", "security/opasswd"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (fnmatch(named[i], rel, FNM_PATHNAME) == 0)
            return true;
    if (S_ISDIR(mode))
        return (mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH);
    if (S_ISREG(mode))
        return (mode & S_IROTH) == 0;
    return false;
}

typedef struct etc_scan {
    ocisbx_bw_list *out;
    char src[PATH_MAX];  /* the host path being scanned */
    char dest[PATH_MAX]; /* the same, in the sandbox */
    size_t rel_at;       /* where the path relative to /etc starts in dest */
} etc_scan;

static int scan_dir(etc_scan *s, int depth, bool *hid);

/* One entry of a directory being expanded (s->src and s->dest name it). */
static int scan_entry(etc_scan *s, const struct stat *st, int depth, bool *hid)
{
    const char *rel = s->dest + s->rel_at;
    if (ocisbx_bwrap_etc_hides(rel, (unsigned)st->st_mode)) {
        *hid = true;
        return 0;
    }
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        return read_link(s->src, target, sizeof target) == 0 ? list_add(s->out, OCISBX_BW_LINK, s->dest, target) : 0;
    }
    if (S_ISREG(st->st_mode))
        return list_add(s->out, OCISBX_BW_BIND, s->dest, s->src);
    if (!S_ISDIR(st->st_mode))
        return 0; /* sockets, FIFOs, devices: not shown */
    size_t mark = s->out->n;
    bool inner = false;
    int rc = scan_dir(s, depth + 1, &inner);
    if (rc)
        return rc;
    if (!inner) { /* nothing hidden below: bound whole */
        list_truncate(s->out, mark);
        return list_add(s->out, OCISBX_BW_BIND, s->dest, s->src);
    }
    *hid = true;
    return 0;
}

/* Expands the directory s->src (shown at s->dest): a DIR, then each entry;
 * *hid set when something below is left out. */
static int scan_dir(etc_scan *s, int depth, bool *hid)
{
    if (depth > OCISBX_BW_ETC_MAX_DEPTH)
        return ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: %s is deeper than %d levels", s->src, OCISBX_BW_ETC_MAX_DEPTH);
    DIR *d = opendir(s->src);
    if (!d)
        return ocisbx_fail(OCISBX_EIO, "bwrap: cannot read %s: %s", s->src, strerror(errno));
    int rc = list_add(s->out, OCISBX_BW_DIR, s->dest, NULL);
    size_t src_len = strlen(s->src), dest_len = strlen(s->dest);
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        size_t nl = strlen(de->d_name);
        if (src_len + nl + 2 > sizeof s->src || dest_len + nl + 2 > sizeof s->dest) {
            rc = ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: a path under %s is too long", s->src);
            break;
        }
        snprintf(s->src + src_len, sizeof s->src - src_len, "/%s", de->d_name);
        snprintf(s->dest + dest_len, sizeof s->dest - dest_len, "/%s", de->d_name);
        struct stat st;
        if (lstat(s->src, &st) == 0)
            rc = scan_entry(s, &st, depth, hid);
        s->src[src_len] = '\0';
        s->dest[dest_len] = '\0';
    }
    closedir(d);
    return rc;
}

int ocisbx_bwrap_scan_etc(const char *host_etc, ocisbx_bw_list *out)
{
    memset(out, 0, sizeof *out);
    etc_scan *s = calloc(1, sizeof *s);
    if (!s)
        return ocisbx_fail_nomem();
    s->out = out;
    snprintf(s->dest, sizeof s->dest, "/etc");
    s->rel_at = strlen("/etc/");
    int rc = 0;
    if ((size_t)snprintf(s->src, sizeof s->src, "%s", host_etc) >= sizeof s->src)
        rc = ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: the /etc path is too long");
    bool hid = false;
    if (!rc)
        rc = scan_dir(s, 0, &hid);
    if (!rc && !hid) { /* nothing to leave out: the whole of it */
        list_truncate(out, 0);
        rc = list_add(out, OCISBX_BW_BIND, "/etc", host_etc);
    }
    free(s);
    if (rc)
        ocisbx_bw_list_free(out);
    return rc;
}

/* ---- the /etc view as an overlay ---------------------------------------------------------- */

/* Appends a copy of str to the NULL-terminated *v (n entries). */
static int strv_add(char ***v, size_t *n, const char *str)
{
    char **nv = realloc(*v, (*n + 2) * sizeof *nv);
    if (!nv)
        return ocisbx_fail_nomem();
    *v = nv;
    if (!(nv[*n] = ocisbx_strdup(str)))
        return ocisbx_fail_nomem();
    nv[++*n] = NULL;
    return 0;
}

typedef struct hidden_scan {
    char path[PATH_MAX];
    size_t rel_at;
    char **out;
    size_t n;
} hidden_scan;

static int hidden_dir(hidden_scan *s, int depth)
{
    if (depth > OCISBX_BW_ETC_MAX_DEPTH)
        return ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: %s is deeper than %d levels", s->path, OCISBX_BW_ETC_MAX_DEPTH);
    DIR *d = opendir(s->path);
    if (!d)
        return ocisbx_fail(OCISBX_EIO, "bwrap: cannot read %s: %s", s->path, strerror(errno));
    size_t len = strlen(s->path);
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (len + strlen(de->d_name) + 2 > sizeof s->path) {
            rc = ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: a path under %s is too long", s->path);
            break;
        }
        snprintf(s->path + len, sizeof s->path - len, "/%s", de->d_name);
        struct stat st;
        if (lstat(s->path, &st) == 0) {
            if (ocisbx_bwrap_etc_hides(s->path + s->rel_at, (unsigned)st.st_mode))
                rc = s->n >= OCISBX_BW_ETC_MAX_ENTRIES
                         ? ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: more than %d entries to hide",
                                       OCISBX_BW_ETC_MAX_ENTRIES)
                         : strv_add(&s->out, &s->n, s->path + s->rel_at);
            else if (S_ISDIR(st.st_mode))
                rc = hidden_dir(s, depth + 1);
        }
        s->path[len] = '\0';
    }
    closedir(d);
    return rc;
}

int ocisbx_bwrap_scan_etc_hidden(const char *host_etc, char ***out)
{
    *out = NULL;
    hidden_scan *s = calloc(1, sizeof *s);
    if (!s)
        return ocisbx_fail_nomem();
    int rc = 0;
    if ((size_t)snprintf(s->path, sizeof s->path, "%s", host_etc) >= sizeof s->path)
        rc = ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: the /etc path is too long");
    s->rel_at = strlen(s->path) + 1;
    if (!rc && !(s->out = calloc(1, sizeof *s->out)))
        rc = ocisbx_fail_nomem();
    if (!rc)
        rc = hidden_dir(s, 0);
    if (rc)
        ocisbx_strv_free(s->out, false);
    else
        *out = s->out;
    free(s);
    return rc;
}

/* A mountinfo path field with its octal escapes (\040 for a space) decoded. */
static void unescape(char *f)
{
    char *w = f;
    for (const char *r = f; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

int ocisbx_bwrap_etc_submounts(const char *mountinfo, char ***out)
{
    *out = NULL;
    FILE *f = fopen(mountinfo, "re");
    if (!f)
        return ocisbx_fail(OCISBX_EIO, "bwrap: cannot read %s: %s", mountinfo, strerror(errno));
    char **v = calloc(1, sizeof *v);
    size_t n = 0;
    int rc = v ? 0 : ocisbx_fail_nomem();
    char line[8192];
    while (!rc && fgets(line, sizeof line, f)) {
        /* id parent major:minor root mount-point ... */
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        for (int i = 0; tok && i < 4; i++)
            tok = strtok_r(NULL, " ", &save);
        if (!tok)
            continue;
        unescape(tok);
        if (strncmp(tok, "/etc/", 5) == 0 && tok[5])
            rc = n >= OCISBX_BW_ETC_MAX_ENTRIES ? ocisbx_fail(OCISBX_ETOOLARGE, "bwrap: too many mounts under /etc")
                                                : strv_add(&v, &n, tok + 5);
    }
    fclose(f);
    if (rc) {
        ocisbx_strv_free(v, false);
        return rc;
    }
    *out = v;
    return 0;
}
