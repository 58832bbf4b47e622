/* The seccomp filter (see seccomp.h), classic BPF built by hand. */
/* O_TMPFILE */
#define _GNU_SOURCE
#include "sys/seccomp.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif

/* Newer than some headers; the same number on both architectures. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#define SYS_io_uring_register 427
#endif
#ifndef O_TMPFILE
#define O_TMPFILE 020200000
#endif

/* The low 32 bits of argument i (a mode or flags: the kernel reads no more). */
#if __BYTE_ORDER == __LITTLE_ENDIAN
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

#define RET_ERRNO(e) (SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
#define SUID_SGID (S_ISUID | S_ISGID)

typedef struct prog {
    struct sock_filter *v;
    size_t n, cap;
    bool full;
} prog;

static void emit(prog *p, struct sock_filter f)
{
    if (p->n < p->cap)
        p->v[p->n++] = f;
    else
        p->full = true;
}

static void stmt(prog *p, uint16_t code, uint32_t k)
{
    emit(p, (struct sock_filter)BPF_STMT(code, k));
}

static void jump(prog *p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
    emit(p, (struct sock_filter)BPF_JUMP(code, k, jt, jf));
}

static void load_nr(prog *p)
{
    stmt(p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
}

/* nr fails with err whatever its arguments. Each block below starts with
 * the number still in the accumulator and either leaves it there (another
 * system call) or returns. */
static void deny(prog *p, long nr, int err)
{
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1);
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(err));
}

/* nr fails with EPERM when its argument mode_arg has S_ISUID or S_ISGID. */
static void deny_suid_mode(prog *p, long nr, int mode_arg)
{
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 4);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(mode_arg));
    jump(p, BPF_JMP | BPF_JSET | BPF_K, SUID_SGID, 0, 1);
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

/* An open that creates (O_CREAT or O_TMPFILE in flags_arg) with those bits. */
static void deny_suid_open(prog *p, long nr, int flags_arg, int mode_arg)
{
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 6);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(flags_arg));
    jump(p, BPF_JMP | BPF_JSET | BPF_K, (uint32_t)(O_CREAT | O_TMPFILE), 0, 3);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(mode_arg));
    jump(p, BPF_JMP | BPF_JSET | BPF_K, SUID_SGID, 0, 1);
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

/* mknod: those bits, or a character or block device. */
static void deny_mknod(prog *p, long nr, int mode_arg)
{
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 7);
    stmt(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)ARG_LO(mode_arg));
    jump(p, BPF_JMP | BPF_JSET | BPF_K, SUID_SGID, 4, 0);
    stmt(p, BPF_ALU | BPF_AND | BPF_K, S_IFMT);
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, S_IFCHR, 2, 0);
    jump(p, BPF_JMP | BPF_JEQ | BPF_K, S_IFBLK, 1, 0);
    stmt(p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
}

static void host_root_rules(prog *p)
{
#ifdef SYS_chmod
    deny_suid_mode(p, SYS_chmod, 1);
#endif
    deny_suid_mode(p, SYS_fchmod, 1);
    deny_suid_mode(p, SYS_fchmodat, 2);
    deny_suid_mode(p, SYS_fchmodat2, 2);
#ifdef SYS_mkdir
    deny_suid_mode(p, SYS_mkdir, 1);
#endif
    deny_suid_mode(p, SYS_mkdirat, 2);
#ifdef SYS_creat
    deny_suid_mode(p, SYS_creat, 1);
#endif
#ifdef SYS_open
    deny_suid_open(p, SYS_open, 1, 2);
#endif
    deny_suid_open(p, SYS_openat, 2, 3);
#ifdef SYS_mknod
    deny_mknod(p, SYS_mknod, 1);
#endif
    deny_mknod(p, SYS_mknodat, 2);
    deny(p, SYS_openat2, ENOSYS);
    deny(p, SYS_io_uring_setup, EPERM);
    deny(p, SYS_io_uring_enter, EPERM);
    deny(p, SYS_io_uring_register, EPERM);
    deny(p, SYS_add_key, EPERM);
    deny(p, SYS_request_key, EPERM);
    deny(p, SYS_keyctl, EPERM);
}

size_t ocisbx_seccomp_build(bool host_root, struct sock_filter *out, size_t cap)
{
    prog p = {out, 0, cap, false};
    stmt(&p, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    jump(&p, BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0);
    stmt(&p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
    load_nr(&p);
#if defined(__x86_64__)
    jump(&p, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1); /* x32 */
    stmt(&p, BPF_RET | BPF_K, RET_ERRNO(EPERM));
#endif
    deny(&p, SYS_ptrace, EPERM);
    if (host_root)
        host_root_rules(&p);
    stmt(&p, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    return p.full ? 0 : p.n;
}
