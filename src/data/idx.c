/* IDX reader (the MNIST family's format), gzip-compressed or plain, through zlib.
 *
 * An IDX file is: two zero bytes, an element type byte, a dimension count byte, one big-endian
 * u32 per dimension, then the elements. We accept unsigned bytes (the only type the MNIST family
 * uses): images of 3 dimensions (n, rows, cols) and labels of 1 dimension (n).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "syncwise/data.h"
#include "syncwise/err.h"

#define IDX_TYPE_UBYTE 0x08

typedef struct idx_file {
    gzFile gz;
    const char *path;
    uint32_t dims[3];
    int n_dims;
    uint64_t offset; /* bytes consumed, for messages */
} idx_file;

static int read_exact(idx_file *f, void *buf, size_t len, const char *what, char *err)
{
    uint8_t *p = buf;
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? (1u << 30) : (unsigned)(len - got);
        int r = gzread(f->gz, p + got, chunk);
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(f->gz, &zerr);
            return sw_fail(err, SW_EFORMAT, "%s: byte %llu: cannot read %s: %s", f->path,
                           (unsigned long long)(f->offset + got), what, msg);
        }
        if (r == 0)
            return sw_fail(err, SW_EFORMAT,
                           "%s: byte %llu: file ends early while reading %s (%zu of %zu bytes)",
                           f->path, (unsigned long long)(f->offset + got), what, got, len);
        got += (size_t)r;
    }
    f->offset += len;
    return 0;
}

static int idx_open(idx_file *f, const char *path, int want_dims, char *err)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    errno = 0;
    f->gz = gzopen(path, "rb");
    if (!f->gz)
        return sw_fail(err, SW_EIO, "%s: cannot open: %s", path,
                       errno ? strerror(errno) : "out of memory");
    uint8_t head[4];
    int rc = read_exact(f, head, 4, "the magic number", err);
    if (rc)
        return rc;
    if (head[0] != 0 || head[1] != 0)
        return sw_fail(err, SW_EFORMAT, "%s: byte 0: not an IDX file (bad magic number)", path);
    if (head[2] != IDX_TYPE_UBYTE)
        return sw_fail(err, SW_EFORMAT,
                       "%s: byte 2: IDX element type 0x%02x is not supported (only 0x08, "
                       "unsigned byte)",
                       path, head[2]);
    if (head[3] != want_dims)
        return sw_fail(err, SW_EFORMAT, "%s: byte 3: %d dimensions where %d were expected", path,
                       head[3], want_dims);
    uint8_t be[12];
    if ((rc = read_exact(f, be, 4u * (unsigned)want_dims, "the dimensions", err)))
        return rc;
    for (int i = 0; i < want_dims; i++) {
        const uint8_t *p = be + 4 * i;
        f->dims[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        if (f->dims[i] == 0)
            return sw_fail(err, SW_EFORMAT, "%s: byte %d: dimension %d is zero", path, 4 + 4 * i,
                           i);
    }
    f->n_dims = want_dims;
    return 0;
}

/* Trailing bytes mean the header lies about the size, so the data cannot be trusted. The end
 * of a gzip stream is where its CRC-32 is checked: a stream cut in its trailer read every byte
 * of the data unchecked, and zlib says so only through gzerror (Z_BUF_ERROR). */
static int idx_expect_end(idx_file *f, char *err)
{
    uint8_t extra;
    int r = gzread(f->gz, &extra, 1), zerr = Z_OK;
    const char *msg = r <= 0 ? gzerror(f->gz, &zerr) : NULL;
    if (r > 0)
        return sw_fail(err, SW_EFORMAT, "%s: byte %llu: unexpected data after the last element",
                       f->path, (unsigned long long)f->offset);
    if (zerr == Z_BUF_ERROR)
        return sw_fail(err, SW_EFORMAT, "%s: the gzip stream ends before its checksum (a "
                       "truncated file?): its data cannot be trusted", f->path);
    if (r < 0 || zerr != Z_OK)
        return sw_fail(err, SW_EFORMAT, "%s: after the last element: %s", f->path, msg);
    return 0;
}

static void idx_close(idx_file *f)
{
    if (f->gz)
        gzclose(f->gz);
    f->gz = NULL;
}

static int read_images(sw_dataset **out, const char *path, uint32_t n_classes, char *err)
{
    idx_file f;
    int rc = idx_open(&f, path, 3, err);
    if (!rc) {
        uint32_t shape[3] = {f.dims[1], f.dims[2], 1};
        char why[SW_ERR_LEN];
        if ((rc = sw_dataset_new(out, f.dims[0], shape, SW_CLASSIFY, n_classes, why)))
            sw_fail(err, rc, "%s: %s", path, why);
    }
    if (!rc) {
        /* Read the bytes into the tail of the float array, then widen front to back: each
         * float lands at or before the byte it comes from has been consumed. */
        sw_dataset *ds = *out;
        size_t total = ds->n * ds->dim;
        uint8_t *bytes = (uint8_t *)(ds->x + total) - total;
        rc = read_exact(&f, bytes, total, "the pixels", err);
        for (size_t i = 0; !rc && i < total; i++)
            ds->x[i] = (float)bytes[i] * (1.0f / 255.0f);
    }
    if (!rc)
        rc = idx_expect_end(&f, err);
    idx_close(&f);
    return rc;
}

static int read_labels(sw_dataset *ds, const char *path, uint32_t n_classes, char *err)
{
    idx_file f;
    int rc = idx_open(&f, path, 1, err);
    uint8_t *bytes = NULL;
    if (!rc && f.dims[0] != ds->n)
        rc = sw_fail(err, SW_EMISMATCH, "%s: %u labels for %zu images", path, f.dims[0], ds->n);
    if (!rc && !(bytes = malloc(ds->n)))
        rc = sw_fail(err, SW_ENOMEM, "out of memory for %zu labels", ds->n);
    if (!rc)
        rc = read_exact(&f, bytes, ds->n, "the labels", err);
    for (size_t i = 0; !rc && i < ds->n; i++) {
        if (bytes[i] >= n_classes)
            rc = sw_fail(err, SW_ERANGE, "%s: byte %zu: label %u of example %zu is not below %u",
                         path, (size_t)8 + i, bytes[i], i, n_classes);
        else
            ds->label[i] = bytes[i];
    }
    if (!rc)
        rc = idx_expect_end(&f, err);
    free(bytes);
    idx_close(&f);
    return rc;
}

int sw_idx_read(sw_dataset **out, const char *images_path, const char *labels_path,
                uint32_t n_classes, char *err)
{
    *out = NULL;
    if (n_classes < 2 || n_classes > 256)
        return sw_fail(err, SW_EINVAL, "IDX labels need 2 to 256 classes, not %u", n_classes);
    sw_dataset *ds = NULL;
    int rc = read_images(&ds, images_path, n_classes, err);
    if (!rc)
        rc = read_labels(ds, labels_path, n_classes, err);
    if (rc) {
        sw_dataset_free(ds);
        return rc;
    }
    *out = ds;
    return 0;
}
