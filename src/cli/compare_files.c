/* The files a comparison's runs read, fingerprinted in its --log-dir (compare_journal.h): a
 * resume whose policy file, trace, data or plugin changed since would table the rows it keeps
 * beside runs of another policy, cluster or data set under one name. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "compare_journal.h"
#include "syncwise/bytes.h"
#include "syncwise/err.h"
#include "syncwise/file.h"
#include "syncwise/spec.h"

#define MAX_FILES 64 /* files a record holds; more are not checked */
#define PATH_LEN 1024
/* The CRC-32 of any bytes followed by their own CRC-32 (little-endian), as a policy file is. */
#define CRC32_RESIDUE 0x2144df1cu

/* A file's size and CRC-32C. Not CRC-32: a policy file ends with the CRC-32 of what precedes
 * it, and the CRC-32 of any such file is one constant (every .swrl's is 2144df1c), so two
 * policies of one size passed for one. A record of an earlier version holds CRC-32s (`castagnoli`
 * false), measured so again. */
typedef struct fingerprint {
    char path[PATH_LEN];
    /* A plugin's: "plugin:POLICY", matched by the policy it brings, wherever the file lies now
     * (SYNCWISE_PLUGINS may spell its path otherwise from one command to the next, and is not
     * part of the scenario); "" for a file a spec names, matched by its path. */
    char key[SW_SPEC_NAME_LEN + 8];
    unsigned long long size;
    uint32_t crc, crc32; /* CRC-32C, and the CRC-32 an older record holds */
    bool castagnoli;     /* a record's line: crc is CRC-32C (else CRC-32) */
} fingerprint;

/* Where a spec names a file: a policy's file= and high=, a cluster's trace:, the data's train=,
 * test=. */
static const char *const keys[] = {"file=", "high=", "trace:", "train=", "test=", NULL};

/* Whether two fingerprints are of one input: one plugin's policy, or one path. */
static bool same(const fingerprint *a, const fingerprint *b)
{
    return a->key[0] || b->key[0] ? !strcmp(a->key, b->key) : !strcmp(a->path, b->path);
}

static bool have(const fingerprint *f, size_t n, const fingerprint *g)
{
    for (size_t i = 0; i < n; i++)
        if (same(&f[i], g))
            return true;
    return false;
}

/* The regular files the texts name, each once, into f (at most MAX_FILES); their count. */
static size_t named(const char *const *texts, size_t n_texts, fingerprint *f)
{
    size_t n = 0;
    for (size_t t = 0; t < n_texts; t++)
        for (int k = 0; texts[t] && keys[k]; k++)
            for (const char *at = strstr(texts[t], keys[k]); at && n < MAX_FILES;
                 at = strstr(at + 1, keys[k])) {
                const char *path = at + strlen(keys[k]);
                size_t len = strcspn(path, ",;@|");
                struct stat st;
                if (!len || len >= PATH_LEN)
                    continue;
                f[n] = (fingerprint){.key = ""};
                snprintf(f[n].path, PATH_LEN, "%.*s", (int)len, path);
                if (!have(f, n, &f[n]) && stat(f[n].path, &st) == 0 && S_ISREG(st.st_mode))
                    n++;
            }
    return n;
}

/* The plugins (SYNCWISE_PLUGINS) that the texts' policies come from, beside the files in f[0,
 * n), each under the policy it brings: a plugin rebuilt between a comparison and its resume
 * would table two policies under one name as surely as a policy file changed. A text is taken
 * for a policy's spec (its name up to ':'; a cluster's or data set's, named as no plugin's
 * policy, finds none) and searched for the switches' "policy=NAME". Their count with f's. */
static size_t plugins_named(const char *const *texts, size_t n_texts, fingerprint *f, size_t n)
{
    for (size_t t = 0; t < n_texts; t++)
        for (const char *at = texts[t]; at && *at && n < MAX_FILES;
             at = strstr(at + 1, "policy=")) {
            const char *name = at == texts[t] ? at : at + strlen("policy=");
            size_t len = strcspn(name, ":,;@|");
            const char *path = sw_cli_plugin_of(name, len);
            if (!path || strlen(path) >= PATH_LEN || len >= SW_SPEC_NAME_LEN)
                continue;
            f[n] = (fingerprint){.castagnoli = true};
            snprintf(f[n].key, sizeof f[n].key, "plugin:%.*s", (int)len, name);
            snprintf(f[n].path, PATH_LEN, "%s", path);
            n += !have(f, n, &f[n]);
        }
    return n;
}

/* Its size and CRCs; false when it cannot be read (what reads it says why). */
static bool measure(fingerprint *f)
{
    FILE *in = fopen(f->path, "rb");
    if (!in)
        return false;
    static unsigned char buf[1 << 16];
    f->size = 0, f->crc = 0, f->crc32 = 0, f->castagnoli = true;
    for (size_t got; (got = fread(buf, 1, sizeof buf, in)) > 0; f->size += got) {
        f->crc = sw_crc32c(f->crc, buf, got);
        f->crc32 = sw_crc32(f->crc32, buf, got);
    }
    bool ok = !ferror(in);
    fclose(in);
    return ok;
}

/* The record's lines ("c:CRC SIZE PATH", CRC-32C, or a plugin's "c:CRC SIZE plugin:POLICY
 * PATH"; an older version's "CRC SIZE PATH", CRC-32) into kept; their count. A line this cannot
 * read is dropped (the file is only ever written whole); no record: none. */
static size_t read_record(const char *record, fingerprint *kept)
{
    FILE *in = fopen(record, "r");
    char line[PATH_LEN + SW_SPEC_NAME_LEN + 80];
    size_t n = 0;
    while (in && fgets(line, sizeof line, in) && n < MAX_FILES) {
        fingerprint r = {.castagnoli = !strncmp(line, "c:", 2)};
        int at = 0;
        line[strcspn(line, "\n")] = '\0';
        const char *from = line + (r.castagnoli ? 2 : 0);
        if (sscanf(from, "%8x %llu %n", &r.crc, &r.size, &at) != 2 || !at || !from[at])
            continue;
        at += (int)(from - line);
        size_t key = !strncmp(line + at, "plugin:", 7) ? strcspn(line + at, " ") : 0;
        if (key && (!line[at + key] || key >= sizeof r.key))
            continue;
        snprintf(r.key, sizeof r.key, "%.*s", (int)key, line + at);
        snprintf(r.path, PATH_LEN, "%s", line + at + key + (key > 0));
        kept[n++] = r;
    }
    if (in)
        fclose(in);
    return n;
}

/* A file the record holds (`was`) as it is now, or the refusal of the resume. */
static int unchanged(const fingerprint *was, const fingerprint *now, const char *dir, char *err)
{
    uint32_t crc = was->castagnoli ? now->crc : now->crc32;
    char whose[PATH_LEN + 64] = "";
    if (now->key[0]) /* its policy's name, and where it lay then */
        snprintf(whose, sizeof whose, " (the plugin of %s; %s then)", now->key + 7, was->path);
    if (!was->castagnoli && was->crc == CRC32_RESIDUE && was->size == now->size)
        return sw_fail(err, SW_EMISMATCH,
                       "--resume: %s: the record in %s, of an earlier version, holds its CRC-32, "
                       "which is the same for every file that ends with its own (a policy "
                       "file), so it cannot tell whether the file changed; compare afresh in "
                       "another --log-dir (or, if you know it did not change, delete its line "
                       "from compare.files)",
                       now->path, dir);
    if (was->crc != crc || was->size != now->size)
        return sw_fail(err, SW_EMISMATCH,
                       "--resume: %s%s changed since the comparison in %s began (%llu bytes, "
                       "CRC-32%s %08x then; %llu, %08x now): the runs it kept would be tabled "
                       "with runs of the new one under one name; give it back, or compare "
                       "afresh in another --log-dir",
                       now->path, whose, dir, was->size, was->castagnoli ? "C" : "",
                       (unsigned)was->crc, now->size, (unsigned)crc);
    return 0;
}

int sw__cmp_files_check(const char *dir, const char *const *texts, size_t n_texts, bool resume,
                        char *err)
{
    static fingerprint now[MAX_FILES], was[MAX_FILES];
    size_t n = plugins_named(texts, n_texts, now, named(texts, n_texts, now)), n_was = 0, m = 0;
    int rc;
    for (size_t i = 0; i < n; i++)
        if (measure(&now[i]))
            now[m++] = now[i];
    n = m;
    char record[4096];
    if (snprintf(record, sizeof record, "%s/compare.files", dir) >= (int)sizeof record)
        return sw_fail(err, SW_EINVAL, "--log-dir %s: the path is too long", dir);
    if (resume)
        n_was = read_record(record, was);
    for (size_t i = 0; i < n_was; i++)
        for (size_t j = 0; j < n; j++)
            if (same(&was[i], &now[j]) && (rc = unchanged(&was[i], &now[j], dir, err)))
                return rc;
    /* Kept: this command's files, and those an earlier one named (a policy left out now may
     * come back in a later resume). */
    static char text[2 * MAX_FILES * (PATH_LEN + 32)];
    size_t len = 0;
    for (size_t i = 0, lines = 0; i < n + n_was && lines < MAX_FILES; i++) {
        const fingerprint *f = i < n ? &now[i] : &was[i - n];
        if (i >= n && have(now, n, f))
            continue;
        lines++; /* as many as a resume reads back; an older line not named now as it was */
        len += (size_t)snprintf(text + len, sizeof text - len, "%s%08x %llu %s%s%s\n",
                                f->castagnoli ? "c:" : "", (unsigned)f->crc, f->size, f->key,
                                f->key[0] ? " " : "", f->path);
    }
    return sw_file_write_atomic(record, (const uint8_t *)text, len, "comparison's file record",
                                err);
}
