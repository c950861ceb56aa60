/*
 * everyo.profiler.storage._cbatch: compiled loops over event batches, for the live dashboard and the
 * summary table.
 *
 * While a profiled cell runs, a refresher thread reads the new events a few times a second and
 * folds them into running aggregates (parents, per-key sums, time-binned flame columns). Done
 * with NumPy, that is over a hundred array calls per refresh, each of which gives the GIL back
 * and takes it again: on a machine whose other core is busy (the browser drawing the
 * dashboard), every one of those hand-overs can keep the profiled code waiting. These loops do
 * the same work in one call each, without the GIL. load() reads everyo's own exports with
 * scan_lines and nests the events of a Chrome trace with nest.
 *
 * The NumPy code beside each caller is the specification and the fallback where this extension
 * was not built (everyo.profiler.storage.run.postorder_parents, everyo_lab.views.flame.live_flame._mark,
 * everyo.profiler.analysis.aggregates.Aggregates, the summary table's one aggregation kernel, exact
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

/* nest(thread, start, end, order, depth, parent): the depth and parent row of each interval
   from containment on its thread, visiting rows in `order` (thread, then start, longest first:
   see everyo/profiler/export/_reading.py, nesting, the specification) with a stack of the
   intervals still open; depth and parent are writable int64, parent -1 for none. */
static PyObject *
nest(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "nest(thread, start, end, order, depth, parent)");
        return NULL;
    }
    Arr a[6];
    memset(a, 0, sizeof a);
    const char *what[6] = {"thread", "start", "end", "order", "depth", "parent"};
    for (int k = 0; k < 6; k++) {
        if (get_arr(args[k], &a[k], k >= 4, what[k]) < 0) {
            release_all(a, 6);
            return NULL;
        }
    }
    Py_ssize_t n = a[0].n;
    if (same_length(a, 6, n, "nest") < 0) {
        release_all(a, 6);
        return NULL;
    }
    int64_t *stack = PyMem_RawMalloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (stack == NULL) {
        release_all(a, 6);
        return PyErr_NoMemory();
    }
    int64_t *depth = OUT(a[4]), *parent = OUT(a[5]);
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t top = 0;
    int64_t thread = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        int64_t i = at(&a[3], r);
        if (i < 0 || i >= n) {
            bad = 1;
            break;
        }
        int64_t t = at(&a[0], i), s = at(&a[1], i), e = at(&a[2], i);
        if (r == 0 || t != thread) {
            top = 0;
            thread = t;
        }
        while (top && !(at(&a[1], stack[top - 1]) <= s && e <= at(&a[2], stack[top - 1])))
            top--;
        depth[i] = top;
        parent[i] = top ? stack[top - 1] : -1;
        stack[top++] = i;
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(stack);
    release_all(a, 6);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "nest: order holds a row out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* scan_lines(block, keys, kinds, last, lenient=False): the fields of a block of whole lines,
   each one JSON object laid out as everyo writes them (see everyo/profiler/export/_fast.py, the
   caller, which checks every value this does not and falls back to the json module for any
   block or line this refuses). A line is "{" "key":value ("," "key":value)* "}", spaces allowed
   only after a colon and after a value; every line ends with "," but the block's last when
   `last`. Each key must be one of `keys` (a tuple of bytes), once per line; its byte of `kinds`
   says how its value is read:
     SCAN_RAW     the value's raw text (strings, objects, arrays, other tokens: the caller
                  decodes them with json.loads);
     SCAN_INT     an integer of at most 18 digits, as int64;
     SCAN_FLOAT   a JSON number, as the float64 the json module gives (float() of its text, or
                  of an integer of at most 15 digits);
     | SCAN_NULL  null is allowed too (its present byte is 2);
     SCAN_OBJECT  an object whose members are the keys named "<key>.<member>" (one level).
   Returns None when a line is laid out otherwise, else (columns, starts, fits): per key a
   (values, present) pair, values an int64 or float64 buffer (bytes) for numbers, a list of bytes
   or None for the others, present a bytes of one 0/1/2 per line; starts the int64 offsets of
   each line and of the block's end; fits one 0/1 per line. With `lenient`, a line laid out
   otherwise is a line with no fields and a 0 in fits, and the caller reads it from `starts`. */
#define SCAN_MAX_KEYS 32
#define SCAN_RAW 0
#define SCAN_INT 1
#define SCAN_FLOAT 2
#define SCAN_NULL 4
#define SCAN_OBJECT 8

typedef struct {
    const char *s;
    Py_ssize_t size;
    Py_ssize_t nk;
    const char *name[SCAN_MAX_KEYS]; /* a member's name past "<object key>." */
    Py_ssize_t len[SCAN_MAX_KEYS];
    int kind[SCAN_MAX_KEYS];
    int parent[SCAN_MAX_KEYS]; /* the object key of a member, -1 at the top level */
    PyObject *vals[SCAN_MAX_KEYS], *pres[SCAN_MAX_KEYS];
    PyObject *prev[SCAN_MAX_KEYS]; /* the last raw text of each key, reused while it repeats */
    const char *prev_at[SCAN_MAX_KEYS];
    Py_ssize_t prev_len[SCAN_MAX_KEYS];
} Scan;

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

static int
value_ends(const char *s, Py_ssize_t j, Py_ssize_t size)
{
    return j < size && (s[j] == ',' || s[j] == '}' || s[j] == ' ');
}

static const double POW10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* the JSON number at s[i] as the json module reads it: 1 and *out, *end; 0 when it is none or
   an integer the json module would keep past what a double holds exactly */
static int
scan_float(const char *s, Py_ssize_t i, Py_ssize_t size, double *out, Py_ssize_t *end)
{
    Py_ssize_t j = i + (i < size && s[i] == '-');
    Py_ssize_t d0 = j;
    int64_t m = 0;
    int digits = 0, frac = 0, exp = 0;
    for (; j < size && s[j] >= '0' && s[j] <= '9'; j++, digits++)
        if (digits < 18)
            m = m * 10 + (s[j] - '0');
    if (j == d0 || (j - d0 > 1 && s[d0] == '0'))
        return 0;
    if (j < size && s[j] == '.') {
        Py_ssize_t f0 = ++j;
        for (; j < size && s[j] >= '0' && s[j] <= '9'; j++, digits++)
            if (digits < 18)
                m = m * 10 + (s[j] - '0');
        frac = (int)(j - f0);
        if (frac == 0)
            return 0;
    }
    if (j < size && (s[j] == 'e' || s[j] == 'E')) {
        exp = 1;
        j += j + 1 < size && (s[j + 1] == '+' || s[j + 1] == '-');
        Py_ssize_t e0 = ++j;
        while (j < size && s[j] >= '0' && s[j] <= '9')
            j++;
        if (j == e0)
            return 0;
    }
    if (!value_ends(s, j, size))
        return 0;
    int neg = s[i] == '-';
    if (!exp && digits <= 15) {
        /* m and 10**frac are exact doubles, so one division rounds as float() does; "-0" is
           the json module's int 0 */
        double v = frac ? (double)m / POW10[frac] : (double)m;
        *out = neg && (frac || m) ? -v : v;
    } else if (!frac && !exp) {
        return 0; /* an integer of over 15 digits: the json module keeps it exact */
    } else {
        char buf[64];
        if (j - i >= (Py_ssize_t)sizeof buf)
            return 0;
        memcpy(buf, s + i, j - i);
        buf[j - i] = '\0';
        char *stop;
        double v = PyOS_string_to_double(buf, &stop, NULL); /* overflow: +-inf, as float() */
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        if (stop != buf + (j - i))
            return 0;
        *out = v;
    }
    *end = j;
    return 1;
}

static int scan_object(Scan *sc, Py_ssize_t *at, Py_ssize_t row, int parent, uint32_t *seen);

/* the value of key k at *at: 1 read, 0 laid out otherwise, -1 a Python error */
static int
scan_value(Scan *sc, int k, Py_ssize_t *at, Py_ssize_t row, uint32_t *seen)
{
    const char *s = sc->s;
    Py_ssize_t size = sc->size, i = *at;
    int kind = sc->kind[k];
    char *present = PyBytes_AS_STRING(sc->pres[k]) + row;
    if ((kind & SCAN_NULL) && size - i >= 4 && memcmp(s + i, "null", 4) == 0 &&
        value_ends(s, i + 4, size)) {
        *present = 2;
        *at = i + 4;
        return 1;
    }
    kind &= ~SCAN_NULL;
    if (kind == SCAN_INT) {
        int neg = s[i] == '-';
        Py_ssize_t d0 = i + neg, j = d0;
        int64_t v = 0;
        while (j < size && s[j] >= '0' && s[j] <= '9' && j - d0 < 19)
            v = v * 10 + (s[j++] - '0');
        Py_ssize_t nd = j - d0;
        if (nd == 0 || nd > 18 || (nd > 1 && s[d0] == '0') || !value_ends(s, j, size))
            return 0;
        ((int64_t *)PyBytes_AS_STRING(sc->vals[k]))[row] = neg ? -v : v;
        i = j;
    } else if (kind == SCAN_FLOAT) {
        if (!scan_float(s, i, size, (double *)PyBytes_AS_STRING(sc->vals[k]) + row, &i))
            return 0;
    } else if (kind == SCAN_OBJECT) {
        int got = scan_object(sc, &i, row, k, seen);
        if (got <= 0)
            return got;
    } else {
        Py_ssize_t j = scan_raw_value(s, i, size);
        if (j < 0)
            return 0;
        PyObject *obj;
        if (sc->prev[k] && sc->prev_len[k] == j - i && memcmp(sc->prev_at[k], s + i, j - i) == 0) {
            obj = sc->prev[k];
            Py_INCREF(obj);
        } else {
            obj = PyBytes_FromStringAndSize(s + i, j - i);
            if (!obj)
                return -1;
            sc->prev[k] = obj;
            sc->prev_at[k] = s + i;
            sc->prev_len[k] = j - i;
        }
        PyObject *old = PyList_GET_ITEM(sc->vals[k], row);
        PyList_SET_ITEM(sc->vals[k], row, obj);
        Py_DECREF(old);
        i = j;
    }
    *present = 1;
    *at = i;
    return 1;
}

static int
find_key(Scan *sc, int parent, const char *key, Py_ssize_t len)
{
    for (int k = 0; k < sc->nk; k++)
        if (sc->parent[k] == parent && sc->len[k] == len && memcmp(sc->name[k], key, len) == 0)
            return k;
    return -1;
}

/* the object at *at, the line itself (parent -1) or a member object: 1, 0 or -1 as above */
static int
scan_object(Scan *sc, Py_ssize_t *at, Py_ssize_t row, int parent, uint32_t *seen)
{
    const char *s = sc->s;
    Py_ssize_t size = sc->size, i = *at;
    if (i >= size || s[i] != '{')
        return 0;
    i++;
    if (parent >= 0 && i < size && s[i] == '}') { /* a member object may be empty */
        *at = i + 1;
        return 1;
    }
    for (;;) {
        if (i >= size || s[i] != '"')
            return 0;
        Py_ssize_t k0 = ++i;
        while (i < size && s[i] != '"' && s[i] != '\\' && s[i] != '\n')
            i++;
        if (i >= size || s[i] != '"')
            return 0;
        int k = find_key(sc, parent, s + k0, i - k0);
        i++;
        if (k < 0 || (*seen & (1u << k)) || i >= size || s[i] != ':')
            return 0;
        *seen |= 1u << k;
        i++;
        while (i < size && s[i] == ' ')
            i++;
        if (i >= size)
            return 0;
        int got = scan_value(sc, k, &i, row, seen);
        if (got <= 0)
            return got;
        while (i < size && s[i] == ' ')
            i++;
        if (i < size && s[i] == ',') {
            i++;
            continue;
        }
        if (i < size && s[i] == '}') {
            *at = i + 1;
            return 1;
        }
        return 0;
    }
}

/* a line laid out otherwise (lenient): the fields it set are taken back */
static void
scan_forget(Scan *sc, Py_ssize_t row, uint32_t seen)
{
    for (int k = 0; k < sc->nk; k++) {
        if (!(seen & (1u << k)))
            continue;
        PyBytes_AS_STRING(sc->pres[k])[row] = 0;
        int kind = sc->kind[k] & ~SCAN_NULL;
        if (kind == SCAN_INT || kind == SCAN_FLOAT) {
            memset(PyBytes_AS_STRING(sc->vals[k]) + 8 * row, 0, 8);
        } else if (kind == SCAN_RAW && PyList_GET_ITEM(sc->vals[k], row) != Py_None) {
            PyObject *old = PyList_GET_ITEM(sc->vals[k], row);
            Py_INCREF(Py_None);
            PyList_SET_ITEM(sc->vals[k], row, Py_None);
            Py_DECREF(old);
            sc->prev[k] = NULL; /* it may have been this line's, now freed */
        }
    }
}

/* the keys: names, kinds, and each member's object key; 0 with a Python error */
static int
scan_keys(Scan *sc, PyObject *keys, PyObject *kinds)
{
    const char *kind = PyBytes_AS_STRING(kinds);
    for (Py_ssize_t k = 0; k < sc->nk; k++) {
        PyObject *key = PyTuple_GET_ITEM(keys, k);
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "scan_lines: keys are bytes");
            return 0;
        }
        sc->name[k] = PyBytes_AS_STRING(key);
        sc->len[k] = PyBytes_GET_SIZE(key);
        sc->kind[k] = kind[k];
        sc->parent[k] = -1;
        const char *dot = memchr(sc->name[k], '.', sc->len[k]);
        if (dot) {
            for (Py_ssize_t p = 0; p < sc->nk; p++) {
                PyObject *obj = PyTuple_GET_ITEM(keys, p);
                if (kind[p] == SCAN_OBJECT && PyBytes_Check(obj) &&
                    PyBytes_GET_SIZE(obj) == dot - sc->name[k] &&
                    memcmp(PyBytes_AS_STRING(obj), sc->name[k], dot - sc->name[k]) == 0)
                    sc->parent[k] = (int)p;
            }
            if (sc->parent[k] < 0 || kind[k] == SCAN_OBJECT) {
                PyErr_SetString(PyExc_ValueError,
                                "scan_lines: a key with a dot is a member of an object key");
                return 0;
            }
            sc->len[k] -= dot + 1 - sc->name[k];
            sc->name[k] = dot + 1;
        }
    }
    return 1;
}

/* one line from s[*at]: 1 read (its comma and newline included), 0 laid out otherwise */
static int
scan_line(Scan *sc, Py_ssize_t *at, Py_ssize_t row, int final, int last, uint32_t *seen)
{
    const char *s = sc->s;
    Py_ssize_t size = sc->size, i = *at;
    int got = scan_object(sc, &i, row, -1, seen);
    if (got <= 0)
        return got;
    while (i < size && s[i] == ' ')
        i++;
    int comma = i < size && s[i] == ',';
    i += comma;
    if (!comma && !(last && final))
        return 0;
    if (i < size && s[i] == '\n')
        i++;
    else if (!(final && i == size))
        return 0;
    *at = i;
    return 1;
}

static PyObject *
scan_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if ((nargs != 4 && nargs != 5) || !PyBytes_Check(args[0]) || !PyTuple_Check(args[1]) ||
        !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "scan_lines(block: bytes, keys: tuple, kinds: bytes, last, lenient=False)");
        return NULL;
    }
    Scan sc = {.s = PyBytes_AS_STRING(args[0]), .size = PyBytes_GET_SIZE(args[0])};
    sc.nk = PyTuple_GET_SIZE(args[1]);
    int last = PyObject_IsTrue(args[3]);
    int lenient = nargs == 5 ? PyObject_IsTrue(args[4]) : 0;
    if (last < 0 || lenient < 0)
        return NULL;
    if (sc.nk > SCAN_MAX_KEYS || PyBytes_GET_SIZE(args[2]) != sc.nk) {
        PyErr_SetString(PyExc_ValueError, "scan_lines: up to 32 keys, one byte of kinds each");
        return NULL;
    }
    if (!scan_keys(&sc, args[1], args[2]))
        return NULL;
    const char *s = sc.s;
    Py_ssize_t size = sc.size, lines = 0;
    for (Py_ssize_t i = 0; i < size; i++)
        lines += s[i] == '\n';
    if (size && s[size - 1] != '\n')
        lines++;
    PyObject *columns = PyList_New(sc.nk);
    PyObject *starts = PyBytes_FromStringAndSize(NULL, (lines + 1) * 8);
    PyObject *fits = PyBytes_FromStringAndSize(NULL, lines);
    int ok = columns && starts && fits;
    for (Py_ssize_t k = 0; ok && k < sc.nk; k++) {
        int kind = sc.kind[k] & ~SCAN_NULL;
        int number = kind == SCAN_INT || kind == SCAN_FLOAT;
        sc.pres[k] = PyBytes_FromStringAndSize(NULL, lines);
        sc.vals[k] = kind == SCAN_OBJECT ? (Py_INCREF(Py_None), Py_None)
                     : number           ? PyBytes_FromStringAndSize(NULL, lines * 8)
                                        : PyList_New(lines);
        ok = sc.pres[k] && sc.vals[k];
        if (ok) {
            memset(PyBytes_AS_STRING(sc.pres[k]), 0, lines);
            if (number)
                memset(PyBytes_AS_STRING(sc.vals[k]), 0, lines * 8); /* 0 and 0.0 */
            else if (kind != SCAN_OBJECT)
                for (Py_ssize_t r = 0; r < lines; r++) {
                    Py_INCREF(Py_None);
                    PyList_SET_ITEM(sc.vals[k], r, Py_None);
                }
        }
    }
    int laid_out = 1;
    Py_ssize_t i = 0;
    for (Py_ssize_t row = 0; ok && row < lines; row++) {
        int64_t *start = (int64_t *)PyBytes_AS_STRING(starts);
        start[row] = i;
        uint32_t seen = 0;
        int got = scan_line(&sc, &i, row, row == lines - 1, last, &seen);
        if (got < 0) {
            ok = 0;
            break;
        }
        PyBytes_AS_STRING(fits)[row] = (char)got;
        if (got)
            continue;
        if (!lenient) {
            laid_out = 0;
            break;
        }
        scan_forget(&sc, row, seen);
        const char *nl = memchr(s + start[row], '\n', size - start[row]);
        i = nl ? nl - s + 1 : size;
    }
    if (ok && laid_out) {
        ((int64_t *)PyBytes_AS_STRING(starts))[lines] = size;
        laid_out = i == size;
    }
    for (Py_ssize_t k = 0; k < sc.nk; k++) {
        if (ok && laid_out) {
            PyObject *pair = PyTuple_Pack(2, sc.vals[k], sc.pres[k]);
            if (!pair)
                ok = 0;
            else
                PyList_SET_ITEM(columns, k, pair);
        }
        Py_XDECREF(sc.vals[k]);
        Py_XDECREF(sc.pres[k]);
    }
    PyObject *result = ok && laid_out ? PyTuple_Pack(3, columns, starts, fits) : NULL;
    Py_XDECREF(columns);
    Py_XDECREF(starts);
    Py_XDECREF(fits);
    if (!ok || (laid_out && !result))
        return NULL;
    if (!laid_out)
        Py_RETURN_NONE;
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
    {"nest", (PyCFunction)(void (*)(void))nest, METH_FASTCALL,
     "nest(thread, start, end, order, depth, parent): nesting by containment (see _reading.py)."},
    {"scan_lines", (PyCFunction)(void (*)(void))scan_lines, METH_FASTCALL,
     "scan_lines(block, keys, kinds, last, lenient=False): the fields of everyo's one-object "
     "lines, or None."},
    {NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "everyo.profiler.storage._cbatch",
    .m_doc = "Compiled loops over event batches for the live dashboard (see the C source).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__cbatch(void)
{
    return PyModule_Create(&moduledef);
}
