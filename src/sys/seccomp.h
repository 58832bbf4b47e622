/* The seccomp filter of an isolated run (library-internal; the runner gives
 * it to bubblewrap with --seccomp, which loads it just before it executes
 * the command, so bwrap's own init stays outside it).
 *
 * Always: ptrace() fails with EPERM (no process of the command can attach
 * to another and stall it), and any other architecture than the native one
 * (i386 or x32 entry points) is refused as a whole, so the filter cannot be
 * bypassed through them.
 *
 * host_root (the command's uid 0 is host root, see proc.h) adds the rule
 * systemd calls RestrictSUIDSGID, and what would reach around it:
 * chmod/fchmod/fchmodat/fchmodat2, mkdir/mkdirat and open/openat/creat with
 * O_CREAT or O_TMPFILE fail with EPERM when the mode has S_ISUID or S_ISGID;
 * mknod/mknodat fail with EPERM for those bits and for a character or block
 * device; openat2 (whose mode the filter cannot read) fails with ENOSYS, so
 * callers fall back to openat; io_uring (which opens files without system
 * calls the filter sees) and the kernel keyrings (the caller's session
 * keyring is inherited) fail with EPERM. */
#ifndef OCISBX_SYS_SECCOMP_H
#define OCISBX_SYS_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/filter.h>

/* Room for the largest filter. */
#define OCISBX_SECCOMP_MAX_INSNS 160

/* Writes the filter into out (cap instructions); returns how many, or 0 when
 * cap is too small. */
size_t ocisbx_seccomp_build(bool host_root, struct sock_filter *out, size_t cap);

#endif
