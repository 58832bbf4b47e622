/* The bubblewrap command line of an isolated run (library-internal; the
 * runner, src/sys/proc.h, is its caller). ocisbx_bwrap_argv is a pure
 * function of its options, so every flag and mount is unit-tested
 * (tests/unit/test_sys_bwrap.c); what it needs to know of the host (which
 * of /bin, /lib... exist and how, and the /etc view) is found by the two
 * scan functions and passed in.
 *
 * The host-root mode (host_root: the runner as root on a workspace that
 * belongs to root, see proc.h) differs in two places: /proc/sys,
 * /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/fs and /proc/mtrr are
 * covered read-only (the command's uid 0 is host root, and the kernel
 * checks these by uid), and /etc is a view (ocisbx_bwrap_scan_etc) instead
 * of the host's /etc bound whole. */
#ifndef OCISBX_SYS_BWRAP_ARGS_H
#define OCISBX_SYS_BWRAP_ARGS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    OCISBX_BW_DIR,  /* --dir dest */
    OCISBX_BW_BIND, /* --ro-bind src dest */
    OCISBX_BW_LINK  /* --symlink src(the target) dest */
} ocisbx_bw_kind;

typedef struct ocisbx_bw_entry {
    ocisbx_bw_kind kind;
    char *dest; /* the path in the sandbox */
    char *src;  /* BIND: the host path; LINK: the link's target; DIR: NULL */
} ocisbx_bw_entry;

typedef struct ocisbx_bw_list {
    ocisbx_bw_entry *v;
    size_t n, cap;
} ocisbx_bw_list;

/* Caps of the /etc view: deeper or larger trees are refused. */
#define OCISBX_BW_ETC_MAX_DEPTH 12
#define OCISBX_BW_ETC_MAX_ENTRIES 4096

typedef struct ocisbx_bwrap_opts {
    const char *bwrap;               /* argv[0] */
    const char *workspace_src;       /* bound read-write at /workspace */
    const char *cwd;                 /* in the sandbox, /workspace or below */
    const char *shell_command;       /* run by /bin/sh -c */
    bool allow_network;              /* false: --unshare-net */
    bool detach;                     /* a job that outlives the caller: no --die-with-parent */
    bool host_root;                  /* see above */
    const ocisbx_bw_list *host_dirs; /* from ocisbx_bwrap_scan_host_dirs; NULL: none */
    const ocisbx_bw_list *etc_view;  /* NULL: etc_src, read-only, whole */
    const char *etc_src;             /* NULL: "/etc"; as host root, a staged view (an overlay) */
    const char *info_fd;             /* --info-fd value ("3") */
    const char *seccomp_fd;          /* --seccomp value ("5") */
} ocisbx_bwrap_opts;

/* The NULL-terminated argv (free with ocisbx_strv_free). 0 or OCISBX_EINVAL
 * (a missing option, a host_root run given the host's /etc whole) or
 * OCISBX_ENOMEM. */
int ocisbx_bwrap_argv(const ocisbx_bwrap_opts *o, char ***out);

/* /bin, /sbin, /lib, /lib32, /lib64, /libx32 under host_root_dir ("" for
 * the host itself): a symlink becomes a LINK (merged /usr), a directory a
 * BIND, what is absent nothing. */
int ocisbx_bwrap_scan_host_dirs(const char *host_root_dir, ocisbx_bw_list *out);

/* Whether the /etc view leaves out rel (a path relative to /etc, such as
 * "shadow" or "ssh/ssh_host_ed25519_key") of the given mode: the password
 * and group shadow files and their backups, SSH host keys, TLS private
 * keys, and whatever other users cannot read (a file without o+r, a
 * directory without o+rx): what an unprivileged user would not see is
 * absent. */
bool ocisbx_bwrap_etc_hides(const char *rel, unsigned mode);

/* The /etc view of host_etc (the host's "/etc", or a fixture), shown at
 * /etc: a directory that holds, at any depth, something hidden becomes a
 * DIR whose other entries are each bound (or linked), recursively; one
 * with nothing hidden is one BIND. Symlinks are never followed. Only
 * regular files, directories and symlinks are shown. OCISBX_EIO when
 * host_etc cannot be read, OCISBX_ETOOLARGE past the caps above. */
int ocisbx_bwrap_scan_etc(const char *host_etc, ocisbx_bw_list *out);

/* The same rule for an overlay view (the runner stages it as host root: a
 * whiteout for each of these over the host's /etc): the paths, relative to
 * host_etc, of what it leaves out, none of them inside another
 * (NULL-terminated, ocisbx_strv_free). Errors as ocisbx_bwrap_scan_etc. */
int ocisbx_bwrap_scan_etc_hidden(const char *host_etc, char ***out);

/* The mount points under /etc in mountinfo (a /proc/<pid>/mountinfo file),
 * relative to /etc ("hosts", "resolv.conf" in a container), in the order
 * mounted: an overlay of /etc shows the file system below them, so the
 * runner binds them again on top (NULL-terminated, ocisbx_strv_free). */
int ocisbx_bwrap_etc_submounts(const char *mountinfo, char ***out);

void ocisbx_bw_list_free(ocisbx_bw_list *l);

/* Frees a NULL-terminated string vector; secret: each string is wiped. */
void ocisbx_strv_free(char **v, bool secret);

#endif
