/* Atomic whole-file writes and whole-file reads; a run's claim on its output files, and
 * whether two paths name one file. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* realpath, flock */
#include "syncwise/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syncwise/err.h"
#include "syncwise/log.h"

static int write_all(int fd, const uint8_t *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Makes the rename itself durable: without this a crash may forget which file the name holds. */
static void sync_dir_of(const char *path)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* PATH + suffix (PATH.lock, PATH.prev) in name; false for a name too long to make. */
static bool sibling(const char *path, const char *suffix, char name[4096])
{
    return snprintf(name, 4096, "%s%s", path, suffix) < 4096;
}

static bool sibling_exists(const char *path, const char *suffix)
{
    char name[4096];
    return sibling(path, suffix, name) && access(name, F_OK) == 0;
}

static bool resolved(const char *path, char out[4096]);

bool sw_file_final_name(const char *path, char out[4096])
{
    char at[4096], target[4096];
    if (snprintf(at, sizeof at, "%s", path) >= (int)sizeof at)
        return false;
    for (int hops = 0; hops < 40; hops++) { /* as the kernel, which gives up at 40 (ELOOP) */
        struct stat st;
        if (lstat(at, &st) != 0 || !S_ISLNK(st.st_mode))
            return resolved(at, out) || snprintf(out, 4096, "%s", at) < 4096;
        ssize_t n = readlink(at, target, sizeof target - 1);
        if (n < 0)
            return false;
        target[n] = '\0';
        char *slash = strrchr(at, '/');
        if (target[0] == '/' || !slash) /* absolute, or relative to the working directory */
            snprintf(at, sizeof at, "%s", target);
        else if (snprintf(slash + 1, sizeof at - (size_t)(slash + 1 - at), "%s", target) >=
                 (int)(sizeof at - (size_t)(slash + 1 - at)))
            return false;
    }
    return false;
}

/* The lock of path's claim: PATH.lock beside the file path names in the end, so that a second
 * process given a link to a claimed file meets the same lock, saved yet or not. */
static bool lock_name(const char *path, char name[4096])
{
    char final[4096];
    return sibling(sw_file_final_name(path, final) ? final : path, ".lock", name);
}

/* FILE.prev beside the file path names in the end, where a shard rotates its saves. */
static bool prev_exists(const char *path)
{
    char final[4096];
    return sibling_exists(sw_file_final_name(path, final) ? final : path, ".prev");
}

static bool saved_at(const char *path)
{
    return access(path, F_OK) == 0 || prev_exists(path);
}

#define SAVED_MARK "saved\n"

/* Whether PATH.lock says a save was made under it (sw_file_note_saved). */
static bool lock_says_saved(const char *path)
{
    char lock[4096], text[sizeof SAVED_MARK] = "";
    FILE *f = lock_name(path, lock) ? fopen(lock, "r") : NULL;
    if (!f)
        return false;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    return n == strlen(SAVED_MARK) && !strcmp(text, SAVED_MARK);
}

void sw_file_note_saved(int lock_fd)
{
    struct stat st;
    if (lock_fd >= 0 && fstat(lock_fd, &st) == 0 && st.st_size == 0 &&
        pwrite(lock_fd, SAVED_MARK, strlen(SAVED_MARK), 0) < 0)
        sw_log(SW_LOG_DEBUG, "cannot mark the lock as saved under: %s", strerror(errno));
}

int sw_file_claim_checkpoint(const char *path, const char *who, bool *resume, int *lock_fd,
                             bool *made, char *err)
{
    *lock_fd = -1;
    char lock[4096];
    bool claimed = lock_name(path, lock) && access(lock, F_OK) == 0;
    int missing = access(path, F_OK) != 0 ? errno : 0; /* ENOENT, or why it cannot be seen */
    if (*resume && missing && !prev_exists(path)) {
        if (!claimed || missing != ENOENT)
            return sw_fail(err, SW_EIO, "%s: cannot open: %s: no run saved or claimed it (a "
                           "mistyped path? a run killed as it started? without --resume one "
                           "starts afresh)", path, strerror(missing));
        if (lock_says_saved(path))
            return sw_fail(err, SW_EIO, "%s: cannot open: %s, though a %s saved checkpoints "
                           "there (%s.lock says so): moved or deleted? Give the file's path; "
                           "without --resume one starts afresh", path, strerror(missing), who,
                           path);
        *resume = false;
        sw_log(SW_LOG_INFO, "%s holds no checkpoint: the %s that claimed it ended before its "
               "first save, and this one starts afresh", path, who);
    }
    *made = !claimed;
    /* An earlier run's mark is kept: cleared here, before the caller refuses a fresh start over
     * a saved file, it would let a later --resume of a file moved away start afresh. */
    return sw_file_claim(path, "--checkpoint", lock_fd, err);
}

int sw_file_refuse_fresh_start(const char *path, bool prev_too, const char *earlier,
                               const char *who, char *err)
{
    char final[4096], prev[4200];
    const char *at = sw_file_final_name(path, final) ? final : path;
    snprintf(prev, sizeof prev, "%s.prev", at);
    struct stat st;
    const char *kept = NULL;
    if (stat(at, &st) == 0 && st.st_size > 0)
        kept = path;
    else if (prev_too && stat(prev, &st) == 0 && st.st_size > 0)
        kept = prev;
    if (!kept)
        return 0;
    return sw_fail(err, SW_ESTATE, "%s is not empty (%s?), and a %s started afresh would "
                   "overwrite it: --resume goes on from it; to start afresh, remove it or name "
                   "another file", kept, earlier, who);
}

int sw_file_claim_output(const char *path, const char *what, int *lock_fd, bool *made, char *err)
{
    char lock[4096];
    *made = lock_name(path, lock) && access(lock, F_OK) != 0;
    return sw_file_claim(path, what, lock_fd, err);
}

void sw_file_release_claim(const char *path, int lock_fd, bool made)
{
    char lock[4096];
    if (lock_fd >= 0 && made && !saved_at(path) && lock_name(path, lock))
        unlink(lock); /* while still ours: no other claim can be under way */
    sw_file_release(lock_fd);
}

void sw_file_release_removing(const char *path, int lock_fd)
{
    char lock[4096];
    if (lock_fd >= 0 && lock_name(path, lock))
        unlink(lock);
    sw_file_release(lock_fd);
}

bool sw_file_pid_gone(const char *pid_text)
{
    if (!*pid_text || pid_text[strspn(pid_text, "0123456789")] || strlen(pid_text) > 10)
        return false;
    long pid = strtol(pid_text, NULL, 10);
    return pid > 0 && pid <= INT32_MAX && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int sw_file_remove_stale(const char *path)
{
    char copy[4096], dir_copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(dir_copy, sizeof dir_copy, "%s", path);
    const char *base = basename(copy), *dir = dirname(dir_copy);
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *name = e->d_name;
        if (strncmp(name, base, blen) || strncmp(name + blen, ".tmp.", 5))
            continue;
        if (sw_file_pid_gone(name + blen + 5)) {
            char stale[8192];
            snprintf(stale, sizeof stale, "%s/%s", dir, name);
            removed += unlink(stale) == 0;
        }
    }
    if (d)
        closedir(d);
    return removed;
}

/* Makes PATH.tmp.PID (its name into tmp) anew with mode (before the umask), for writing; -1
 * with errno set when it cannot (ENAMETOOLONG for a path too long). Made anew, not truncated:
 * a file left there keeps its mode, which a secret must not inherit. */
static int open_temporary(const char *path, char tmp[4096], mode_t mode)
{
    if (snprintf(tmp, 4096, "%s.tmp.%ld", path, (long)getpid()) >= 4096) {
        errno = ENAMETOOLONG;
        return -1;
    }
    unlink(tmp);
    return open(tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
}

/* A whole-file write renames over its path: a device, a FIFO or a socket there would be
 * replaced by a regular file (as root, /dev/null itself). */
bool sw_file_replaceable(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

bool sw_file_in_use(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    struct stat st;
    bool held = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}

/* The refusal of an output over a file another process writes (sw_file_in_use). */
static int in_use(const char *path, const char *what, char *err)
{
    return sw_fail(err, SW_ESTATE, "%s %s: another process writes it (a running server's log?), "
                   "which this would replace: give a file of its own", what, path);
}

int sw_file_check_writable(const char *path, const char *what, char *err)
{
    struct stat st;
    if (!*path)
        return sw_fail(err, SW_EINVAL, "%s: an empty path: give a file's name", what);
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) /* the rename at the end would fail */
        return sw_fail(err, SW_EIO, "%s %s: is a directory: give a file's name", what, path);
    if (exists && !S_ISREG(st.st_mode)) /* as sw_file_replaceable says */
        return sw_fail(err, SW_EIO, "%s %s: is not a regular file (a device, FIFO or socket), "
                       "which a save would replace: give a file's name", what, path);
    if (exists && sw_file_in_use(path))
        return in_use(path, what, err);
    char tmp[4096];
    int fd = open_temporary(path, tmp, 0644);
    if (fd < 0)
        return sw_fail(err, SW_EIO, "%s %s: cannot write there: %s", what, path, strerror(errno));
    close(fd);
    unlink(tmp);
    return 0;
}

/* path with its directory resolved (the file itself may not exist yet); false when even the
 * directory does not. */
static bool resolved(const char *path, char out[4096])
{
    char dir_copy[4096], base_copy[4096], dir[PATH_MAX];
    snprintf(dir_copy, sizeof dir_copy, "%s", path);
    snprintf(base_copy, sizeof base_copy, "%s", path);
    if (!realpath(dirname(dir_copy), dir))
        return false;
    return snprintf(out, 4096, "%s/%s", dir, basename(base_copy)) < 4096;
}

bool sw_file_same(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ra[4096], rb[4096];
    return strcmp(a, b) == 0 || (resolved(a, ra) && resolved(b, rb) && strcmp(ra, rb) == 0);
}

static int lock_path(const char *path, const char *what, int *lock_fd, char *err);

/* The longest suffix a save puts on a file's name: a sharded server's FILE.model, written as
 * FILE.model.tmp.PID, under the largest pid Linux gives (PID_MAX_LIMIT). A name that leaves no
 * room for it failed at a save (a sharded run at its very end), or worked or not by the pid. */
#define SAVE_SUFFIX_MAX (sizeof ".model.tmp.4194304" - 1)

static const char *base_name(const char *path)
{
    return strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

/* Room for what a save adds to the name of the file it writes in the end (a link's target). */
static int check_name_room(const char *path, const char *what, char *err)
{
    char final[4096];
    const char *base = base_name(sw_file_final_name(path, final) ? final : path);
    if (strlen(base) + SAVE_SUFFIX_MAX <= NAME_MAX)
        return 0;
    return sw_fail(err, SW_EINVAL, "%s %s: a name of %zu bytes%s leaves no room for what its "
                   "saves add (NAME.model.tmp.PID): give one of at most %zu", what, path,
                   strlen(base), strcmp(base, base_name(path)) ? " (the file it links to)" : "",
                   NAME_MAX - SAVE_SUFFIX_MAX);
}

int sw_file_claim(const char *path, const char *what, int *lock_fd, char *err)
{
    *lock_fd = -1;
    int rc = *path ? check_name_room(path, what, err) : 0;
    if (!rc)
        rc = sw_file_check_writable(path, what, err);
    return rc ? rc : lock_path(path, what, lock_fd, err);
}

/* The message of a lock another process holds. */
static int held(const char *path, const char *what, int e, char *err)
{
    return sw_fail(err, SW_ESTATE, "%s %s: %s", what, path,
                   e == EWOULDBLOCK ? "another process writes it already (two given one "
                                      "file?): give each its own"
                                    : strerror(e));
}

FILE *sw_file_open_log(const char *path, bool keep, const char *what, char *err)
{
    /* A FIFO or a device (/dev/stdout into a pipe) is written only, as a shell's `>` would:
     * opened to read as well, a FIFO nobody reads opened at once, swallowed a short log and
     * hung a long one; opened to write, it waits for its reader. */
    struct stat at;
    bool special = stat(path, &at) == 0 && !S_ISREG(at.st_mode) && !S_ISDIR(at.st_mode);
    int fd = open(path, (special ? O_WRONLY : O_RDWR | O_CREAT) | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        sw_fail(err, SW_EIO, "%s %s: cannot open: %s", what, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    /* The file's own lock, whatever path reached it (a link, another spelling). */
    if (regular && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        held(path, what, errno, err);
        close(fd);
        return NULL;
    }
    if (regular && !keep && ftruncate(fd, 0) != 0) {
        sw_fail(err, SW_EIO, "%s %s: cannot empty it: %s", what, path, strerror(errno));
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, special ? "a" : "a+");
    if (!f) {
        sw_fail(err, SW_ENOMEM, "%s %s: %s", what, path, strerror(errno));
        close(fd);
    }
    return f;
}

static int lock_path(const char *path, const char *what, int *lock_fd, char *err)
{
    *lock_fd = -1;
    char lock[4096];
    if (!lock_name(path, lock))
        return sw_fail(err, SW_EIO, "%s %s: the path is too long", what, path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EACCES) /* another user's, left behind: flock needs no write */
        fd = open(lock, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, SW_EIO, "%s %s: cannot open %s: %s", what, path, lock,
                       strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        return held(path, what, e, err);
    }
    *lock_fd = fd;
    return 0;
}

void sw_file_release(int lock_fd)
{
    if (lock_fd >= 0)
        close(lock_fd); /* the lock goes with it; the empty PATH.lock stays for the next run */
}

int sw_file_keep_as(const char *path, const char *as)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", as, (long)getpid()) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    sw_file_remove_stale(as); /* a second name a killed save left */
    unlink(tmp);
    if (link(path, tmp) == 0) {
        if (rename(tmp, as) == 0)
            return 1;
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (errno == ENOENT)
        return 0;
    if (errno != EPERM && errno != EXDEV && errno != EMLINK && errno != ENOTSUP &&
        errno != EOPNOTSUPP)
        return -1;
    if (rename(path, as) == 0) /* no hard links here */
        return 1;
    return errno == ENOENT ? 0 : -1;
}

/* The written temporary tmp put at path: renamed over whatever is there, or (a new file only)
 * linked, which fails with EEXIST when a file appeared there meanwhile (the caller then lets
 * tmp go, as after any failure). */
static int put_in_place(const char *tmp, const char *path, bool new_only)
{
    if (!new_only)
        return rename(tmp, path);
    if (link(tmp, path) != 0)
        return -1;
    unlink(tmp);
    return 0;
}

static int write_atomic(const char *path, const uint8_t *b, size_t n, mode_t mode, bool new_only,
                        const char *what, char *err)
{
    /* Through a symbolic link to the file it names: renamed over, the link would become a file
     * of its own, and the file the user linked to would keep the old contents. Not a new
     * private file (a secret key): a link planted where it goes must not place it elsewhere. */
    struct stat st;
    char final[4096];
    if (!new_only && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
        sw_file_final_name(path, final))
        path = final; /* a link to no file yet too: the file is made where it points */
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return sw_fail(err, SW_EIO, "%s: is a directory: give a file's name for the %s", path,
                       what);
    if (!sw_file_replaceable(path))
        return sw_fail(err, SW_EIO, "%s: is not a regular file (a device, FIFO or socket): "
                       "the %s would replace it", path, what);
    if (sw_file_in_use(path))
        return in_use(path, what, err);
    sw_file_remove_stale(path);
    char tmp[4096];
    int fd = open_temporary(path, tmp, mode);
    if (fd < 0)
        return sw_fail(err, SW_EIO, "%s: cannot write %s there: %s", path, what,
                       strerror(errno));
    int bad = write_all(fd, b, n) || fsync(fd);
    int saved = errno;
    bad |= close(fd) != 0;
    if (!bad && put_in_place(tmp, path, new_only) == 0) {
        sync_dir_of(path);
        return 0;
    }
    saved = bad ? saved : errno;
    unlink(tmp);
    if (!bad && saved == EEXIST)
        return sw_fail(err, SW_ESTATE, "%s: made meanwhile by another process: the %s is not "
                       "written over it", path, what);
    return sw_fail(err, SW_EIO, "%s: cannot write %s: %s", path, what, strerror(saved));
}

int sw_file_write_atomic(const char *path, const uint8_t *b, size_t n, const char *what, char *err)
{
    return write_atomic(path, b, n, 0644, false, what, err);
}

int sw_file_write_private(const char *path, const uint8_t *b, size_t n, const char *what,
                          char *err)
{
    return write_atomic(path, b, n, 0600, true, what, err);
}

int sw_file_read_all(const char *path, size_t max, uint8_t **out, size_t *len, char *err)
{
    /* Non-blocking, so that a FIFO does not hang the open; only regular files are read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sw_fail(err, SW_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = sw_fail(err, SW_EIO, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size > max)
        rc = sw_fail(err, SW_EFORMAT, "%s: %lld bytes is larger than any valid file (%zu)", path,
                     (long long)st.st_size, max);
    size_t size = rc ? 0 : (size_t)st.st_size;
    uint8_t *b = NULL;
    if (!rc && !(b = malloc(size ? size : 1)))
        rc = sw_fail(err, SW_ENOMEM, "%s: out of memory for %zu bytes", path, size);
    for (size_t got = 0; !rc && got < size;) {
        ssize_t r = read(fd, b + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = sw_fail(err, SW_EIO, "%s: read error%s", path, r == 0 ? " (it shrank)" : "");
        else
            got += (size_t)r;
    }
    close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    *out = b;
    *len = size;
    return 0;
}

int sw_file_write_line(const char *path, const char *text, const char *what, char *err)
{
    size_t n = strlen(text);
    uint8_t *b = malloc(n + 1);
    if (!b)
        return sw_fail(err, SW_ENOMEM, "no memory to write %s", what);
    memcpy(b, text, n);
    b[n] = '\n';
    int rc = sw_file_write_atomic(path, b, n + 1, what, err);
    free(b);
    return rc;
}

int sw_file_drop_torn_line(int fd)
{
    off_t end = lseek(fd, 0, SEEK_END), keep = end;
    char c = '\n';
    ssize_t got = 1;
    while (keep > 0 && (got = pread(fd, &c, 1, keep - 1)) == 1 && c != '\n')
        keep--;
    if (end < 0 || (keep > 0 && got != 1))
        return -1; /* not readable: nothing is cut */
    if (keep == end)
        return 0;
    return ftruncate(fd, keep) == 0 ? 1 : -1;
}

int sw_file_close(FILE *f, const char *path, char *err)
{
    if (!f)
        return 0;
    bool failed = ferror(f) != 0;
    failed |= fclose(f) != 0;
    return failed ? sw_fail(err, SW_EIO, "%s: write error (a full disk?): it is incomplete", path)
                  : 0;
}

FILE *sw_file_create(const char *path, const char *what, char *err)
{
    if (sw_file_in_use(path)) {
        in_use(path, what, err);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        sw_fail(err, SW_EIO, "%s %s: cannot create: %s", what, path, strerror(errno));
    return f;
}
