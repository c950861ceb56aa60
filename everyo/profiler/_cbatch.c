/*
 * everyo.profiler._cbatch: compiled loops over event batches, for the live dashboard and the
 * summary table.
 *
 * While a profiled cell runs, a refresher thread reads the new events a few times a second and
 * folds them into running aggregates (parents, per-key sums, time-binned flame columns). Done
 * with NumPy, that is over a hundred array calls per refresh, each of which gives the GIL back
 * and takes it again: on a machine whose other core is busy (the browser drawing the
 * dashboard), every one of those hand-overs can keep the profiled code waiting. These loops do
 * the same work in one call each, without the GIL.
 *
 * The NumPy code beside each caller is the specification and the fallback where this extension
 * was not built (everyo.profiler.run.postorder_parents, everyo_lab.views.live_flame._mark,
 * everyo.profiler.aggregates.Aggregates, the summary table's one aggregation kernel, exact
 * and live): the tests run both and compare.
 *
 * Arrays come in through the buffer protocol: C-contiguous signed integers of 2, 4 or 8 bytes
 * for inputs, writable C-contiguous int64 for outputs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    Py_ssize_t n;
    int itemsize;
    int held;
} Arr;

static void
release_all(Arr *arrs, int count)
{
    for (int i = 0; i < count; i++) {
        if (arrs[i].held) {
            PyBuffer_Release(&arrs[i].view);
            arrs[i].held = 0;
        }
    }
}

/* a signed integer format: 'b', 'h', 'i', 'l', 'q' (with an optional byte-order prefix) */
static int
signed_int_format(const char *fmt)
{
    if (fmt == NULL)
        return 1; /* unsigned bytes: never asked with PyBUF_FORMAT */
    if (*fmt == '<' || *fmt == '=' || *fmt == '@' || *fmt == '!' || *fmt == '>') {
        if (*fmt == '>' || *fmt == '!')
            return 0; /* big-endian: not what this machine reads */
        fmt++;
    }
    return (fmt[0] == 'b' || fmt[0] == 'h' || fmt[0] == 'i' || fmt[0] == 'l' || fmt[0] == 'q') &&
           fmt[1] == '\0';
}

/* obj as a C-contiguous 1-d signed-integer array; `out`: writable int64 */
static int
get_arr(PyObject *obj, Arr *a, int out, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (out ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &a->view, flags) < 0)
        return -1;
    a->held = 1;
    a->itemsize = (int)a->view.itemsize;
    a->n = a->view.ndim == 0 ? 1 : a->view.len / (a->view.itemsize ? a->view.itemsize : 1);
    int size_ok = out ? a->itemsize == 8
                      : (a->itemsize == 1 || a->itemsize == 2 || a->itemsize == 4 || a->itemsize == 8);
    if (!signed_int_format(a->view.format) || !size_ok) {
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous %s array, got format %s", what,
                     out ? "int64" : "signed integer", a->view.format ? a->view.format : "?");
        return -1;
    }
    return 0;
}

static inline int64_t
at(const Arr *a, Py_ssize_t i)
{
    const char *p = (const char *)a->view.buf;
    switch (a->itemsize) {
    case 1: return ((const int8_t *)p)[i];
    case 2: return ((const int16_t *)p)[i];
    case 4: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

#define OUT(a) ((int64_t *)(a).view.buf)

static int
same_length(Arr *arrs, int count, Py_ssize_t n, const char *fn)
{
    for (int i = 0; i < count; i++) {
        if (arrs[i].n != n) {
            PyErr_Format(PyExc_ValueError, "%s: array %d has %zd items, expected %zd", fn, i,
                         arrs[i].n, n);
            return -1;
        }
    }
    return 0;
}

/* postorder_parents(thread, depth, first_row, out): out[i] = the next row j > i of the same
   thread one level up, plus first_row (-1: none in the batch). One pass from the end, keeping
   the latest row seen per (thread, depth) in a (largest label + 1) x (largest depth + 1)
   table: labels and depths must lie in [0, LABEL_LIMIT) (at most 128 MB; callers fall back to
   NumPy beyond it). */
#define LABEL_LIMIT 4096
static PyObject *
postorder_parents(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "postorder_parents(thread, depth, first_row, out)");
        return NULL;
    }
    long long first_row = PyLong_AsLongLong(args[2]);
    if (first_row == -1 && PyErr_Occurred())
        return NULL;
    Arr a[3];
    memset(a, 0, sizeof a);
    if (get_arr(args[0], &a[0], 0, "thread") < 0 || get_arr(args[1], &a[1], 0, "depth") < 0 ||
        get_arr(args[3], &a[2], 1, "out") < 0 || same_length(a, 3, a[0].n, "postorder_parents") < 0) {
        release_all(a, 3);
        return NULL;
    }
    Py_ssize_t n = a[0].n;
    int64_t *out = OUT(a[2]);
    int bad = 0, nomem = 0;
    int64_t *next = NULL;
    Py_BEGIN_ALLOW_THREADS
    int64_t max_t = 0, max_d = 0;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t t = at(&a[0], i), d = at(&a[1], i);
        bad = t < 0 || t >= LABEL_LIMIT || d < 0 || d >= LABEL_LIMIT;
        if (t > max_t)
            max_t = t;
        if (d > max_d)
            max_d = d;
    }
    Py_ssize_t width = (Py_ssize_t)max_d + 1, cells = ((Py_ssize_t)max_t + 1) * width;
    if (!bad)
        next = PyMem_RawMalloc((size_t)cells * sizeof(int64_t));
    nomem = !bad && next == NULL;
    if (next != NULL) {
        for (Py_ssize_t c = 0; c < cells; c++)
            next[c] = -1;
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            int64_t t = at(&a[0], i), d = at(&a[1], i);
            int64_t up = d > 0 ? next[t * width + d - 1] : -1;
            out[i] = up >= 0 ? up + first_row : -1;
            next[t * width + d] = i;
        }
    }
    Py_END_ALLOW_THREADS
    release_all(a, 3);
    if (bad) {
        PyErr_Format(PyExc_ValueError, "thread labels and depths must lie in [0, %d)", LABEL_LIMIT);
        return NULL;
    }
    if (nomem)
        return PyErr_NoMemory();
    PyMem_RawFree(next);
    Py_RETURN_NONE;
}

/* mark_columns(shift, n_cols, (start, dur, lane, code, key, self, shape),
                (count, busy, lo, hi, cmin, cmax, rep_key, rep_start, rep_dur, rep_self, rep_shape))
   Each event goes to the column its start falls in (start >> shift, clipped to [0, n_cols - 1])
   of its lane: count += 1, busy += dur, lo = min(start), hi = max(end), cmin/cmax of the colour code,
   and the rep_* fields of the last event so marked. The column arrays are lanes x n_cols,
   flat. */
static PyObject *
mark_columns(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_Check(args[2]) || PyTuple_GET_SIZE(args[2]) != 7 ||
        !PyTuple_Check(args[3]) || PyTuple_GET_SIZE(args[3]) != 11) {
        PyErr_SetString(PyExc_TypeError,
                        "mark_columns(shift, n_cols, (7 event arrays), (11 column arrays))");
        return NULL;
    }
    long shift = PyLong_AsLong(args[0]);
    Py_ssize_t n_cols = PyLong_AsSsize_t(args[1]);
    if (PyErr_Occurred())
        return NULL;
    if (shift < 0 || shift > 62 || n_cols < 1) {
        PyErr_SetString(PyExc_ValueError, "mark_columns: shift in [0, 62], n_cols >= 1");
        return NULL;
    }
    Arr a[18];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 7; i++) {
        if (get_arr(PyTuple_GET_ITEM(args[2], i), &a[i], 0, "event column") < 0) {
            release_all(a, 18);
            return NULL;
        }
    }
    for (int i = 0; i < 11; i++) {
        if (get_arr(PyTuple_GET_ITEM(args[3], i), &a[7 + i], 1, "flame column") < 0) {
            release_all(a, 18);
            return NULL;
        }
    }
    Py_ssize_t n = a[0].n, size = a[7].n;
    if (same_length(a, 7, n, "mark_columns events") < 0 ||
        same_length(a + 7, 11, size, "mark_columns columns") < 0 || size % n_cols) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "mark_columns: columns are not lanes x n_cols");
        release_all(a, 18);
        return NULL;
    }
    Py_ssize_t lanes = size / n_cols;
    int bad_lane = 0;
    int64_t *count = OUT(a[7]), *busy = OUT(a[8]), *lo = OUT(a[9]), *hi = OUT(a[10]),
            *cmin = OUT(a[11]), *cmax = OUT(a[12]), *rkey = OUT(a[13]), *rstart = OUT(a[14]),
            *rdur = OUT(a[15]), *rself = OUT(a[16]), *rshape = OUT(a[17]);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad_lane; i++) {
        int64_t lane = at(&a[2], i);
        bad_lane = lane < 0 || lane >= lanes; /* reported below; nothing is marked */
    }
    for (Py_ssize_t i = 0; i < n && !bad_lane; i++) {
        int64_t start = at(&a[0], i), dur = at(&a[1], i), code = at(&a[3], i);
        int64_t col = start >> shift; /* arithmetic: floor division by 2**shift */
        if (col > n_cols - 1)
            col = n_cols - 1;
        if (col < 0) /* an event that started before the run's origin: the first column */
            col = 0;
        Py_ssize_t c = (Py_ssize_t)at(&a[2], i) * n_cols + (Py_ssize_t)col;
        count[c] += 1;
        busy[c] += dur;
        if (start < lo[c])
            lo[c] = start;
        if (start + dur > hi[c])
            hi[c] = start + dur;
        if (code < cmin[c])
            cmin[c] = code;
        if (code > cmax[c])
            cmax[c] = code;
        rkey[c] = at(&a[4], i);
        rstart[c] = start;
        rdur[c] = dur;
        rself[c] = at(&a[5], i);
        rshape[c] = at(&a[6], i);
    }
    Py_END_ALLOW_THREADS
    release_all(a, 18);
    if (bad_lane) {
        PyErr_Format(PyExc_ValueError, "mark_columns: a lane outside [0, %zd)", lanes);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* table_add(slot, dur, own, calls, total, self_ns, min_ns, max_ns): per row, into its slot:
   calls += 1, total += dur, self += own, min/max of dur. */
static PyObject *
table_add(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "table_add(slot, dur, own, calls, total, self_ns, min_ns, max_ns)");
        return NULL;
    }
    Arr a[8];
    memset(a, 0, sizeof a);
    static const char *names[] = {"slot", "dur", "own", "calls", "total", "self_ns", "min_ns",
                                  "max_ns"};
    for (int i = 0; i < 8; i++) {
        if (get_arr(args[i], &a[i], i >= 3, names[i]) < 0) {
            release_all(a, 8);
            return NULL;
        }
    }
    Py_ssize_t n = a[0].n, slots = a[3].n;
    if (same_length(a, 3, n, "table_add rows") < 0 ||
        same_length(a + 3, 5, slots, "table_add slots") < 0) {
        release_all(a, 8);
        return NULL;
    }
    int64_t *calls = OUT(a[3]), *total = OUT(a[4]), *self_ns = OUT(a[5]), *mn = OUT(a[6]),
            *mx = OUT(a[7]);
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t s = at(&a[0], i);
        bad = s < 0 || s >= slots;
    }
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        Py_ssize_t s = (Py_ssize_t)at(&a[0], i);
        int64_t d = at(&a[1], i);
        calls[s] += 1;
        total[s] += d;
        self_ns[s] += at(&a[2], i);
        if (d < mn[s])
            mn[s] = d;
        if (d > mx[s])
            mx[s] = d;
    }
    Py_END_ALLOW_THREADS
    release_all(a, 8);
    if (bad) {
        PyErr_Format(PyExc_ValueError, "table_add: a slot outside [0, %zd)", slots);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* add_at(out, index, values): out[index[i]] += values[i] for index[i] >= 0 (np.add.at over the
   rows whose index is not -1) */
static PyObject *
add_at(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "add_at(out, index, values)");
        return NULL;
    }
    Arr a[3];
    memset(a, 0, sizeof a);
    if (get_arr(args[0], &a[0], 1, "out") < 0 || get_arr(args[1], &a[1], 0, "index") < 0 ||
        get_arr(args[2], &a[2], 0, "values") < 0 || same_length(a + 1, 2, a[1].n, "add_at") < 0) {
        release_all(a, 3);
        return NULL;
    }
    Py_ssize_t n = a[1].n, size = a[0].n;
    int bad = 0;
    int64_t *out = OUT(a[0]);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad; i++)
        bad = at(&a[1], i) >= size;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t k = at(&a[1], i);
        if (k >= 0)
            out[k] += at(&a[2], i);
    }
    Py_END_ALLOW_THREADS
    release_all(a, 3);
    if (bad) {
        PyErr_Format(PyExc_ValueError, "add_at: an index past the end (%zd items)", size);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* scan_lines(block, keys, ints, last): the fields of a block of whole lines, each one flat JSON
   object laid out as everyo writes them (see everyo/profiler/export/_fast.py, the caller, which
   checks every value this does not and falls back to the json module for any block this
   refuses). A line is "{" "key":value ("," "key":value)* "}", spaces allowed only after a
   colon and before the comma that ends the line; every line ends with "," but the block's last
   when `last`. Each key must be one of `keys` (a tuple of bytes), once per line. Values of keys
   whose byte of `ints` is 1 must be integers of at most 18 digits; others are captured as their
   raw text (strings, objects, arrays, other tokens, validated by the caller's json.loads).
   Returns None when the block is laid out otherwise, else a list, per key, of (values, present):
   values an int64 buffer (bytes) for integer keys, a list of bytes or None for the others;
   present a bytes of one 0/1 per line. */
#define SCAN_MAX_KEYS 32

static Py_ssize_t
scan_raw_value(const char *s, Py_ssize_t i, Py_ssize_t end)
{
    /* the end (exclusive) of the raw value starting at s[i], or -1 */
    char c = s[i];
    if (c == '"') {
        for (i++; i < end; i++) {
            unsigned char d = (unsigned char)s[i];
            if (d == '"')
                return i + 1;
            if (d < 0x20)
                return -1;
            if (d == '\\')
                i++;
        }
        return -1;
    }
    if (c == '{' || c == '[') {
        int depth = 0, in_str = 0;
        for (; i < end; i++) {
            unsigned char d = (unsigned char)s[i];
            if (d < 0x20)
                return -1;
            if (in_str) {
                if (d == '\\')
                    i++;
                else if (d == '"')
                    in_str = 0;
            } else if (d == '"') {
                in_str = 1;
            } else if (d == '{' || d == '[') {
                depth++;
            } else if (d == '}' || d == ']') {
                if (--depth == 0)
                    return i + 1;
            }
        }
        return -1;
    }
    Py_ssize_t j = i;
    while (j < end && s[j] != ',' && s[j] != '}' && s[j] != ' ' && (unsigned char)s[j] >= 0x20)
        j++;
    return j > i ? j : -1;
}

static PyObject *
scan_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "scan_lines(block: bytes, keys: tuple, ints: bytes, last)");
        return NULL;
    }
    const char *s = PyBytes_AS_STRING(args[0]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    Py_ssize_t nk = PyTuple_GET_SIZE(args[1]);
    int last = PyObject_IsTrue(args[3]);
    if (nk > SCAN_MAX_KEYS || PyBytes_GET_SIZE(args[2]) != nk || last < 0) {
        if (last >= 0)
            PyErr_SetString(PyExc_ValueError, "scan_lines: up to 32 keys, one byte of ints each");
        return NULL;
    }
    const char *kname[SCAN_MAX_KEYS];
    Py_ssize_t klen[SCAN_MAX_KEYS];
    const char *isint = PyBytes_AS_STRING(args[2]);
    for (Py_ssize_t k = 0; k < nk; k++) {
        PyObject *key = PyTuple_GET_ITEM(args[1], k);
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "scan_lines: keys are bytes");
            return NULL;
        }
        kname[k] = PyBytes_AS_STRING(key);
        klen[k] = PyBytes_GET_SIZE(key);
    }
    Py_ssize_t lines = 0;
    for (Py_ssize_t i = 0; i < size; i++)
        lines += s[i] == '\n';
    if (size && s[size - 1] != '\n')
        lines++;
    PyObject *result = PyList_New(nk);
    PyObject *vals[SCAN_MAX_KEYS] = {0}, *pres[SCAN_MAX_KEYS] = {0};
    PyObject *prev[SCAN_MAX_KEYS] = {0};
    const char *prev_at[SCAN_MAX_KEYS];
    Py_ssize_t prev_len[SCAN_MAX_KEYS];
    int ok = result != NULL;
    for (Py_ssize_t k = 0; ok && k < nk; k++) {
        pres[k] = PyBytes_FromStringAndSize(NULL, lines);
        vals[k] = isint[k] ? PyBytes_FromStringAndSize(NULL, lines * 8) : PyList_New(lines);
        ok = pres[k] && vals[k];
        if (ok) {
            memset(PyBytes_AS_STRING(pres[k]), 0, lines);
            if (isint[k])
                memset(PyBytes_AS_STRING(vals[k]), 0, lines * 8);
            else
                for (Py_ssize_t r = 0; r < lines; r++) {
                    Py_INCREF(Py_None);
                    PyList_SET_ITEM(vals[k], r, Py_None);
                }
        }
    }
    int fits = ok;
    Py_ssize_t i = 0;
    for (Py_ssize_t row = 0; fits && row < lines; row++) {
        uint32_t seen = 0;
        if (i >= size || s[i] != '{') {
            fits = 0;
            break;
        }
        i++;
        for (;;) {
            /* "key": */
            if (i >= size || s[i] != '"') {
                fits = 0;
                break;
            }
            Py_ssize_t k0 = ++i;
            while (i < size && s[i] != '"' && s[i] != '\\' && s[i] != '\n')
                i++;
            if (i >= size || s[i] != '"') {
                fits = 0;
                break;
            }
            Py_ssize_t kl = i - k0;
            Py_ssize_t k = 0;
            while (k < nk && !(klen[k] == kl && memcmp(kname[k], s + k0, kl) == 0))
                k++;
            i++;
            if (k == nk || (seen & (1u << k)) || i >= size || s[i] != ':') {
                fits = 0;
                break;
            }
            seen |= 1u << k;
            i++;
            while (i < size && s[i] == ' ')
                i++;
            if (i >= size) {
                fits = 0;
                break;
            }
            if (isint[k]) {
                int neg = s[i] == '-';
                Py_ssize_t d0 = i + neg, j = d0;
                int64_t v = 0;
                while (j < size && s[j] >= '0' && s[j] <= '9' && j - d0 < 19)
                    v = v * 10 + (s[j++] - '0');
                Py_ssize_t nd = j - d0;
                if (nd == 0 || nd > 18 || (nd > 1 && s[d0] == '0') || j >= size ||
                    (s[j] != ',' && s[j] != '}' && s[j] != ' ')) {
                    fits = 0;
                    break;
                }
                ((int64_t *)PyBytes_AS_STRING(vals[k]))[row] = neg ? -v : v;
                i = j;
            } else {
                Py_ssize_t j = scan_raw_value(s, i, size);
                if (j < 0) {
                    fits = 0;
                    break;
                }
                PyObject *obj;
                if (prev[k] && prev_len[k] == j - i && memcmp(prev_at[k], s + i, j - i) == 0) {
                    obj = prev[k];
                    Py_INCREF(obj);
                } else {
                    obj = PyBytes_FromStringAndSize(s + i, j - i);
                    if (!obj) {
                        ok = fits = 0;
                        break;
                    }
                    prev[k] = obj;
                    prev_at[k] = s + i;
                    prev_len[k] = j - i;
                }
                PyObject *old = PyList_GET_ITEM(vals[k], row);
                PyList_SET_ITEM(vals[k], row, obj);
                Py_DECREF(old);
                i = j;
            }
            PyBytes_AS_STRING(pres[k])[row] = 1;
            while (i < size && s[i] == ' ')
                i++;
            if (i < size && s[i] == ',') {
                i++;
                continue;
            }
            if (i < size && s[i] == '}') {
                i++;
                break;
            }
            fits = 0;
            break;
        }
        if (!fits)
            break;
        while (i < size && s[i] == ' ')
            i++;
        int comma = i < size && s[i] == ',';
        i += comma;
        int final = row == lines - 1;
        if (!comma && !(last && final)) {
            fits = 0;
            break;
        }
        if (i < size && s[i] == '\n')
            i++;
        else if (!(final && i == size)) {
            fits = 0;
            break;
        }
    }
    if (fits && i != size)
        fits = 0;
    for (Py_ssize_t k = 0; k < nk; k++) {
        if (ok && fits) {
            PyObject *pair = PyTuple_Pack(2, vals[k], pres[k]);
            if (!pair)
                ok = 0;
            else
                PyList_SET_ITEM(result, k, pair);
        }
        Py_XDECREF(vals[k]);
        Py_XDECREF(pres[k]);
    }
    if (!ok) {
        Py_XDECREF(result);
        return NULL;
    }
    if (!fits) {
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    return result;
}

static PyMethodDef methods[] = {
    {"postorder_parents", (PyCFunction)(void (*)(void))postorder_parents, METH_FASTCALL,
     "postorder_parents(thread, depth, first_row, out): each row's parent row (see run.py)."},
    {"mark_columns", (PyCFunction)(void (*)(void))mark_columns, METH_FASTCALL,
     "mark_columns(shift, n_cols, events, columns): live flame columns (see live_flame.py)."},
    {"table_add", (PyCFunction)(void (*)(void))table_add, METH_FASTCALL,
     "table_add(slot, dur, own, calls, total, self_ns, min_ns, max_ns) (see aggregates.py)."},
    {"add_at", (PyCFunction)(void (*)(void))add_at, METH_FASTCALL,
     "add_at(out, index, values): out[index] += values where index >= 0."},
    {"scan_lines", (PyCFunction)(void (*)(void))scan_lines, METH_FASTCALL,
     "scan_lines(block, keys, ints, last): the fields of everyo's one-object lines, or None."},
    {NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "everyo.profiler._cbatch",
    .m_doc = "Compiled loops over event batches for the live dashboard (see the C source).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__cbatch(void)
{
    return PyModule_Create(&moduledef);
}
