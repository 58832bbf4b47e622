/* The emulator test fixture (see emu_fixture.h). */
#include "emu_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "key_pool.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

struct emu_fixture {
    char dir[256];
    char state_dir[300];
    char yaml[300];
    char config[300];
    char key_path[300];
    char ca[300];
    char cert[300];
    char cert_key[300];
    char url[256];
    char fingerprint[48];
    char key_id[512];
    bool https;
    bool isolated;
    char api_version[32];
    ocisbx_key *key;
    ocisbx_key *session_key;
    pid_t pid;
};

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "emu_fixture: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static int write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return fail("cannot write %s: %s", path, strerror(errno));
    fputs(text, fp);
    return fclose(fp) == 0 ? 0 : fail("cannot write %s", path);
}

/* The keys come from the pool (key_pool.h): distinct within the process,
 * generated once per build directory. */
static EVP_PKEY *gen_rsa(void)
{
    return test_key_pool_rsa2048();
}

static int write_key_pair(EVP_PKEY *pk, const char *priv_path, const char *pub_path)
{
    FILE *fp = fopen(priv_path, "w");
    if (!fp || !PEM_write_PrivateKey(fp, pk, NULL, NULL, 0, NULL, NULL)) {
        if (fp)
            fclose(fp);
        return fail("cannot write %s", priv_path);
    }
    fclose(fp);
    chmod(priv_path, 0600);
    if (pub_path) {
        fp = fopen(pub_path, "w");
        if (!fp || !PEM_write_PUBKEY(fp, pk)) {
            if (fp)
                fclose(fp);
            return fail("cannot write %s", pub_path);
        }
        fclose(fp);
    }
    return 0;
}

static X509 *make_cert(EVP_PKEY *subject_key, EVP_PKEY *issuer_key, X509 *issuer, const char *cn, bool ca)
{
    X509 *x = X509_new();
    if (!x)
        return NULL;
    X509_set_version(x, 2);
    unsigned char serial[8];
    for (size_t i = 0; i < sizeof serial; i++)
        serial[i] = (unsigned char)(rand() & 0x7f);
    ASN1_INTEGER_set(X509_get_serialNumber(x), (long)((serial[0] << 16) | (serial[1] << 8) | serial[2]) + 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 7L * 24 * 3600);
    X509_set_pubkey(x, subject_key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    const char *exts[][2] = {
        {"basicConstraints", ca ? "critical,CA:TRUE" : "CA:FALSE"},
        {"keyUsage", ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature,keyEncipherment"},
        {"subjectKeyIdentifier", "hash"},
        {ca ? NULL : "extendedKeyUsage", "serverAuth"},
        {ca ? NULL : "subjectAltName", "IP:127.0.0.1,DNS:localhost"},
    };
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        if (!exts[i][0])
            continue;
        X509_EXTENSION *e = X509V3_EXT_conf_nid(
            NULL, &ctx, OBJ_sn2nid(exts[i][0]) != NID_undef ? OBJ_sn2nid(exts[i][0]) : OBJ_ln2nid(exts[i][0]),
            exts[i][1]);
        if (e) {
            X509_add_ext(x, e, -1);
            X509_EXTENSION_free(e);
        }
    }
    if (!X509_sign(x, issuer_key, EVP_sha256())) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static int write_cert(X509 *x, const char *path)
{
    FILE *fp = fopen(path, "w");
    if (!fp || !PEM_write_X509(fp, x)) {
        if (fp)
            fclose(fp);
        return fail("cannot write %s", path);
    }
    fclose(fp);
    return 0;
}

static int make_tls(emu_fixture *f)
{
    EVP_PKEY *ca_key = gen_rsa(), *srv_key = gen_rsa();
    X509 *ca = ca_key ? make_cert(ca_key, ca_key, NULL, "ocisbx test CA", true) : NULL;
    X509 *srv = (ca && srv_key) ? make_cert(srv_key, ca_key, ca, "127.0.0.1", false) : NULL;
    int rc = srv ? 0 : fail("cannot make the test CA / server certificate");
    if (!rc)
        rc = write_cert(ca, f->ca);
    if (!rc)
        rc = write_cert(srv, f->cert);
    if (!rc)
        rc = write_key_pair(srv_key, f->cert_key, NULL);
    X509_free(ca);
    X509_free(srv);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(srv_key);
    return rc;
}

static bool bwrap_usable(void)
{
    /* the same probe the emulator makes, so tests run where bwrap cannot
     * (once per process: the answer does not change while a test runs) */
    static int usable = -1;
    if (usable < 0)
        usable = system("bwrap --ro-bind / / --unshare-pid --unshare-net --die-with-parent true >/dev/null 2>&1") ==
                 0;
    return usable == 1;
}

static int launch(emu_fixture *f)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return fail("pipe: %s", strerror(errno));
    const char *argv[16];
    int n = 0;
    argv[n++] = OCISBX_EMULATOR_PATH;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--config";
    argv[n++] = f->yaml;
    argv[n++] = "--state-dir";
    argv[n++] = f->state_dir;
    argv[n++] = "--api-version";
    argv[n++] = f->api_version;
    if (f->https) {
        argv[n++] = "--tls-cert";
        argv[n++] = f->cert;
        argv[n++] = "--tls-key";
        argv[n++] = f->cert_key;
    }
    if (!f->isolated)
        argv[n++] = "--no-isolation";
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return fail("fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execv(argv[0], (char *const *)(void *)argv);
        _exit(127);
    }
    close(pfd[1]);
    f->pid = pid;
    char line[256];
    size_t len = 0;
    /* a generous bound so a broken emulator fails the test instead of hanging it */
    int64_t waited = 0;
    while (len < sizeof line - 1) {
        struct pollfd p = {pfd[0], POLLIN, 0};
        int pr = poll(&p, 1, 1000);
        if (pr == 0) {
            if ((waited += 1000) > 60000)
                break;
            continue;
        }
        ssize_t r = read(pfd[0], line + len, 1);
        if (r <= 0)
            break;
        if (line[len] == '\n')
            break;
        len++;
    }
    line[len] = 0;
    close(pfd[0]);
    const char *prefix = f->https ? "listening on https://127.0.0.1:" : "listening on http://127.0.0.1:";
    if (strncmp(line, prefix, strlen(prefix)) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        f->pid = 0;
        return fail("the emulator did not print its listening line (got \"%s\")", line);
    }
    snprintf(f->url, sizeof f->url, "%s", line + strlen("listening on "));
    return 0;
}

int emu_fixture_start(const emu_fixture_options *opts, emu_fixture **out)
{
    emu_fixture_options dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!opts)
        opts = &dflt;
    *out = NULL;
    emu_fixture *f = calloc(1, sizeof *f);
    if (!f)
        return fail("out of memory");
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/ocisbx-emu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return fail("mkdtemp: %s", strerror(errno));
    }
    snprintf(f->api_version, sizeof f->api_version, "%s",
             opts->api_version ? opts->api_version : EMU_FIXTURE_API_VERSION);
    f->https = opts->https;
    f->isolated = !opts->no_isolation && (opts->force_isolation || bwrap_usable());
    snprintf(f->state_dir, sizeof f->state_dir, "%s/state", f->dir);
    snprintf(f->yaml, sizeof f->yaml, "%s/tenancy.yaml", f->dir);
    snprintf(f->config, sizeof f->config, "%s/oci_config", f->dir);
    snprintf(f->key_path, sizeof f->key_path, "%s/keys/user.pem", f->dir);
    snprintf(f->ca, sizeof f->ca, "%s/ca.pem", f->dir);
    snprintf(f->cert, sizeof f->cert, "%s/server.pem", f->dir);
    snprintf(f->cert_key, sizeof f->cert_key, "%s/server.key", f->dir);
    char path[400], path2[400];
    snprintf(path, sizeof path, "%s/keys", f->dir);
    mkdir(path, 0700);
    mkdir(f->state_dir, 0700);

    EVP_PKEY *uk = gen_rsa(), *sk = gen_rsa();
    int rc = (uk && sk) ? 0 : fail("cannot generate RSA keys");
    snprintf(path, sizeof path, "%s/keys/user.pub.pem", f->dir);
    if (!rc)
        rc = write_key_pair(uk, f->key_path, path);
    snprintf(path, sizeof path, "%s/keys/session.pem", f->dir);
    snprintf(path2, sizeof path2, "%s/keys/session.pub.pem", f->dir);
    if (!rc)
        rc = write_key_pair(sk, path, path2);
    EVP_PKEY_free(uk);
    EVP_PKEY_free(sk);
    if (!rc && (ocisbx_key_load_file(f->key_path, NULL, &f->key) != 0 ||
                ocisbx_key_load_file(path, NULL, &f->session_key) != 0 ||
                ocisbx_key_fingerprint(f->key, f->fingerprint) != 0))
        rc = fail("cannot load the generated keys: %s", ocisbx_error_message(ocisbx_error_last()));
    snprintf(f->key_id, sizeof f->key_id, "%s/%s/%s", EMU_FIXTURE_TENANCY, EMU_FIXTURE_USER, f->fingerprint);
    snprintf(path2, sizeof path2, "%s/keys/session.token", f->dir);
    if (!rc)
        rc = write_text(path2, EMU_FIXTURE_SESSION_TOKEN);
    if (!rc && f->https)
        rc = make_tls(f);
    if (!rc) {
        const char *extra = opts->extra_yaml ? opts->extra_yaml : "";
        bool own_projects = strstr(extra, "projects:") != NULL;
        char *yaml = NULL;
        size_t ylen = 0;
        FILE *ym = open_memstream(&yaml, &ylen);
        fprintf(ym,
                "region: " EMU_FIXTURE_REGION "\n"
                "tenancy: " EMU_FIXTURE_TENANCY "\n"
                "users:\n"
                "  - id: " EMU_FIXTURE_USER "\n"
                "    fingerprint: \"%s\"\n"
                "    public_key_file: keys/user.pub.pem\n"
                "session_tokens:\n"
                "  - token: \"" EMU_FIXTURE_SESSION_TOKEN "\"\n"
                "    public_key_file: keys/session.pub.pem\n"
                "    expires: 2099-01-01T00:00:00Z\n"
                "  - token: \"" EMU_FIXTURE_EXPIRED_TOKEN "\"\n"
                "    public_key_file: keys/session.pub.pem\n"
                "    expires: 2001-01-01T00:00:00Z\n",
                f->fingerprint);
        if (!own_projects)
            fprintf(ym, "projects:\n"
                        "  - id: " EMU_FIXTURE_PROJECT "\n"
                        "    network: deny\n"
                        "    warmpools: [pool-a]\n"
                        "  - id: " EMU_FIXTURE_PROJECT_NET "\n"
                        "    network: allow\n");
        fputs(extra, ym);
        fclose(ym);
        rc = write_text(f->yaml, yaml);
        free(yaml);
        char cfg[2048];
        snprintf(cfg, sizeof cfg,
                 "[DEFAULT]\nuser=%s\nfingerprint=%s\nkey_file=%s\ntenancy=%s\nregion=%s\n\n"
                 "[SESSION]\nfingerprint=%s\nkey_file=%s/keys/session.pem\ntenancy=%s\nregion=%s\n"
                 "security_token_file=%s/keys/session.token\n",
                 EMU_FIXTURE_USER, f->fingerprint, f->key_path, EMU_FIXTURE_TENANCY, EMU_FIXTURE_REGION,
                 f->fingerprint, f->dir, EMU_FIXTURE_TENANCY, EMU_FIXTURE_REGION, f->dir);
        if (!rc)
            rc = write_text(f->config, cfg);
    }
    if (!rc)
        rc = launch(f);
    if (rc) {
        emu_fixture_free(f);
        return -1;
    }
    *out = f;
    return 0;
}

int emu_fixture_stop(emu_fixture *f)
{
    if (!f || f->pid <= 0)
        return 0;
    kill(f->pid, SIGTERM);
    int st = 0;
    while (waitpid(f->pid, &st, 0) < 0 && errno == EINTR) {
    }
    f->pid = 0;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return -1;
}

int emu_fixture_restart(emu_fixture *f)
{
    int st = emu_fixture_stop(f);
    if (st != 0)
        return fail("the emulator exited with %d when stopped", st);
    return launch(f);
}

static void rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rmtree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

void emu_fixture_free(emu_fixture *f)
{
    if (!f)
        return;
    if (f->pid > 0)
        emu_fixture_stop(f);
    ocisbx_key_free(f->key);
    ocisbx_key_free(f->session_key);
    if (f->dir[0] && !getenv("EMU_FIXTURE_KEEP"))
        rmtree(f->dir);
    free(f);
}

const char *emu_fixture_url(const emu_fixture *f)
{
    return f->url;
}
const char *emu_fixture_config_path(const emu_fixture *f)
{
    return f->config;
}
const char *emu_fixture_ca_path(const emu_fixture *f)
{
    return f->https ? f->ca : NULL;
}
const char *emu_fixture_dir(const emu_fixture *f)
{
    return f->dir;
}
const char *emu_fixture_state_dir(const emu_fixture *f)
{
    return f->state_dir;
}
const char *emu_fixture_fingerprint(const emu_fixture *f)
{
    return f->fingerprint;
}
const char *emu_fixture_key_path(const emu_fixture *f)
{
    return f->key_path;
}
ocisbx_key *emu_fixture_key(const emu_fixture *f)
{
    return f->key;
}
ocisbx_key *emu_fixture_session_key(const emu_fixture *f)
{
    return f->session_key;
}
int emu_fixture_pid(const emu_fixture *f)
{
    return (int)f->pid;
}
bool emu_fixture_isolated(const emu_fixture *f)
{
    return f->isolated;
}
const char *emu_fixture_key_id(const emu_fixture *f)
{
    return f->key_id;
}

/* ---- requests ---- */
static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    emu_fixture_result *r = ud;
    size_t len = size * n;
    char *nb = realloc(r->body, r->body_len + len + 1);
    if (!nb)
        return 0;
    memcpy(nb + r->body_len, p, len);
    r->body = nb;
    r->body_len += len;
    nb[r->body_len] = 0;
    return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    emu_fixture_result *r = ud;
    size_t len = size * n;
    size_t old = r->headers ? strlen(r->headers) : 0;
    char *nh = realloc(r->headers, old + len + 1);
    if (!nh)
        return 0;
    memcpy(nh + old, p, len);
    nh[old + len] = 0;
    r->headers = nh;
    return len;
}

static void full_url(const emu_fixture *f, const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s%s", f->url, f->api_version, path);
}

int emu_fixture_send(emu_fixture *f, const char *method, const char *path, const void *body, size_t body_len,
                     const char *const *header_lines, emu_fixture_result *out)
{
    memset(out, 0, sizeof *out);
    char url[4096];
    full_url(f, path, url, sizeof url);
    CURL *c = curl_easy_init();
    if (!c)
        return fail("curl_easy_init failed");
    struct curl_slist *hl = NULL;
    for (size_t i = 0; header_lines && header_lines[i]; i++)
        hl = curl_slist_append(hl, header_lines[i]);
    /* curl must add nothing of its own that the tests did not ask for */
    hl = curl_slist_append(hl, "Expect:");
    hl = curl_slist_append(hl, "Accept:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    if (body || !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH")) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
    }
    if (f->https)
        curl_easy_setopt(c, CURLOPT_CAINFO, f->ca);
    CURLcode cc = curl_easy_perform(c);
    out->curl_code = (int)cc;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    if (!out->body) {
        out->body = calloc(1, 1);
        out->body_len = 0;
    }
    return 0;
}

int emu_fixture_sign(emu_fixture *f, const emu_fixture_req *req, ocisbx_headers **out)
{
    char url[4096];
    full_url(f, req->path, url, sizeof url);
    ocisbx_sign_request *sr = NULL;
    int rc = ocisbx_sign_request_new(req->method, url, &sr);
    if (!rc && req->date)
        rc = ocisbx_sign_request_set_date(sr, req->date);
    if (!rc && req->content_type)
        rc = ocisbx_sign_request_set_content_type(sr, req->content_type);
    if (!rc && req->body)
        rc = ocisbx_sign_request_set_body(sr, req->body, req->body_len);
    if (!rc)
        rc = ocisbx_sign_with_key(req->key_id ? req->key_id : f->key_id, req->key ? req->key : f->key, sr, out);
    ocisbx_sign_request_free(sr);
    return rc ? fail("signing failed: %s", ocisbx_error_message(ocisbx_error_last())) : 0;
}

int emu_fixture_do(emu_fixture *f, const emu_fixture_req *req, emu_fixture_result *out)
{
    ocisbx_headers *h = NULL;
    memset(out, 0, sizeof *out);
    if (emu_fixture_sign(f, req, &h) != 0)
        return -1;
    size_t n = ocisbx_headers_count(h), extra = 0;
    while (req->extra_headers && req->extra_headers[extra])
        extra++;
    char **lines = calloc(n + extra + 1, sizeof(char *));
    if (!lines) {
        ocisbx_headers_free(h);
        return fail("out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(ocisbx_headers_name(h, i)) + strlen(ocisbx_headers_value(h, i)) + 3;
        lines[i] = malloc(l);
        snprintf(lines[i], l, "%s: %s", ocisbx_headers_name(h, i), ocisbx_headers_value(h, i));
    }
    for (size_t i = 0; i < extra; i++)
        lines[n + i] = strdup(req->extra_headers[i]);
    int rc = emu_fixture_send(f, req->method, req->path, req->body, req->body_len, (const char *const *)lines, out);
    for (size_t i = 0; i < n + extra; i++)
        free(lines[i]);
    free(lines);
    ocisbx_headers_free(h);
    return rc;
}

int emu_fixture_request(emu_fixture *f, const char *method, const char *path, const char *json_body,
                        emu_fixture_result *out)
{
    emu_fixture_req r;
    memset(&r, 0, sizeof r);
    r.method = method;
    r.path = path;
    r.body = json_body;
    r.body_len = json_body ? strlen(json_body) : 0;
    return emu_fixture_do(f, &r, out);
}

char *emu_fixture_result_header(const emu_fixture_result *r, const char *name)
{
    if (!r->headers)
        return NULL;
    size_t n = strlen(name);
    for (const char *p = r->headers; *p;) {
        const char *e = strstr(p, "\r\n");
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l > n && p[n] == ':' && !strncasecmp(p, name, n)) {
            const char *v = p + n + 1;
            while (*v == ' ')
                v++;
            return strndup(v, (size_t)(p + l - v));
        }
        p += l;
        if (*p)
            p += 2;
    }
    return NULL;
}

void emu_fixture_result_free(emu_fixture_result *r)
{
    free(r->body);
    free(r->headers);
    memset(r, 0, sizeof *r);
}

bool emu_fixture_process_exists(const char *marker)
{
    DIR *d = opendir("/proc");
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    pid_t self = getpid();
    while (!found && (e = readdir(d))) {
        char *end = NULL;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        char path[64], buf[8192];
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        for (ssize_t i = 0; i < n; i++)
            if (!buf[i])
                buf[i] = ' ';
        buf[n] = 0;
        found = strstr(buf, marker) != NULL;
    }
    closedir(d);
    return found;
}

int emu_fixture_json(emu_fixture *f, const char *method, const char *path, const char *json_body, long expect,
                     cJSON **out)
{
    emu_fixture_result r;
    if (out)
        *out = NULL;
    if (emu_fixture_request(f, method, path, json_body, &r) != 0)
        return -1;
    int rc = 0;
    if (r.status != expect) {
        rc = fail("%s %s: expected HTTP %ld, got %ld (curl %d): %s", method, path, expect, r.status, r.curl_code,
                  r.body ? r.body : "");
    } else if (out && r.body_len) {
        *out = cJSON_ParseWithLength(r.body, r.body_len);
    }
    emu_fixture_result_free(&r);
    return rc;
}

int emu_fixture_wait_state(emu_fixture *f, const char *id, const char *state)
{
    char path[256];
    snprintf(path, sizeof path, "/sandboxes/%s", id);
    for (int i = 0; i < 1200; i++) {
        emu_fixture_result r;
        if (emu_fixture_request(f, "GET", path, NULL, &r) != 0)
            return -1;
        bool done = false;
        if (!strcmp(state, "404")) {
            done = r.status == 404;
        } else if (r.status == 200) {
            cJSON *j = cJSON_ParseWithLength(r.body, r.body_len);
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "lifecycleState");
            done = cJSON_IsString(st) && !strcmp(st->valuestring, state);
            cJSON_Delete(j);
        }
        emu_fixture_result_free(&r);
        if (done)
            return 0;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return fail("sandbox %s never reached %s", id, state);
}

int emu_fixture_new_sandbox(emu_fixture *f, const char *project, const char *fields, char *id, size_t cap)
{
    char path[512], body[4096];
    snprintf(path, sizeof path, "/sandboxes?projectId=%s", project ? project : EMU_FIXTURE_PROJECT);
    snprintf(body, sizeof body, "{%s}", fields ? fields : "");
    cJSON *j = NULL;
    if (emu_fixture_json(f, "POST", path, body, 200, &j) != 0)
        return -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "id");
    int rc = cJSON_IsString(v) ? 0 : fail("create answered without an id");
    if (!rc)
        snprintf(id, cap, "%s", v->valuestring);
    cJSON_Delete(j);
    return rc ? rc : emu_fixture_wait_state(f, id, "RUNNING");
}

int emu_fixture_setup_state(const emu_fixture_options *opts, void **state)
{
    emu_fixture *f = NULL;
    if (emu_fixture_start(opts, &f) != 0)
        return -1;
    *state = f;
    return 0;
}

int emu_fixture_teardown_state(void **state)
{
    emu_fixture *f = *state;
    int st = emu_fixture_stop(f);
    emu_fixture_free(f);
    return st == 0 ? 0 : -1;
}
