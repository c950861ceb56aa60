/*
 * everyo.profiler.recording._crecorder: the compiled module-call path of the profiler's recorder.
 *
 * It does exactly what everyo/profiler/recording/py_recorder.py's PyModuleCall.module_call does (that
 * Python code is the specification, and the fallback where this extension was not built):
 * time one module call, keep the thread's nesting depth and module scope, and append
 * (start, end, packed key|depth|shape) to the thread's buffer. Everything that is not the
 * common case (the outermost module, a module missing from the path map, a new shape, warmup
 * or a schedule, a failing forward, a flush) calls back into the Python recorder.
 *
 * The contract (everyo/profiler/recording/contract.py): Python sets what this code reads only through
 * configure(**options) (contract.OPTIONS, each checked here before any is applied; the members
 * are read-only), and this code calls back only the methods in contract.C_CALLBACKS. Policy
 * (warmup, schedule, naming, shape text, when to flush, CUDA) stays in Python: this code
 * follows the mode, flags and limits it is given.
 *
 * ThreadState is the per-thread record the Python recorder and regions use (same fields as
 * py_recorder.PyThreadState); its buffer is an EventBuffer, a growable int64 array that Python
 * code extends with `buf += (a, b, c)` like the list the pure-Python path uses, and that the
 * flush reads without converting a Python int per field.
 *
 * The engine's compiled Module.__call__ (everyo/nn/_cmodule.c) enters a module event through
 * the capsule `module_call_api` (module_call_api.h: a version and one function, the C form of
 * the hook protocol's module_call), handed to it by everyo.profiler.recording.hooks; this file knows
 * nothing of the engine's Module, and the engine nothing of ModuleCall's layout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <time.h>

#include "_packing.h" /* KEY_BITS, SHAPE_SHIFT, KEY_MASK, MODE_*: packing.py's */
#include "module_call_api.h"

#if PY_VERSION_HEX < 0x030D0000
static inline int
PyObject_GetOptionalAttr(PyObject *obj, PyObject *name, PyObject **result)
{
    return _PyObject_LookupAttr(obj, name, result);
}
#endif

#if PY_VERSION_HEX < 0x030C0000
static inline PyObject *
PyErr_GetRaisedException(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL)
        return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

static inline void
PyErr_SetRaisedException(PyObject *exc)
{
    if (exc == NULL) {
        PyErr_Clear();
        return;
    }
    PyObject *type = Py_NewRef((PyObject *)Py_TYPE(exc));
    PyObject *tb = PyException_GetTraceback(exc);
    PyErr_Restore(type, exc, tb);
}
#endif


static PyObject *str_new_state, *str_root_call, *str_unlisted, *str_shape_id, *str_data,
    *str_shape, *str_keys, *str_emit_call, *str_forward, *str_module_call, *str_dtype;
static PyTypeObject *ndarray_t; /* numpy.ndarray where its layout was checked, else NULL */

/* The leading fields of NumPy's PyArrayObject_fields (numpy/ndarraytypes.h), part of NumPy's
   ABI since 1.7 and unchanged in 2.x; module init checks them on a real array before use. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr; /* the dtype object (`arr.dtype` is it) */
} NdPrefix;
static PyObject *perf_counter_ns; /* time.perf_counter_ns: read as clock_gettime below */

/* ------------------------------------------------------------------------------------------ */
/* EventBuffer: a thread's finished events, flat int64 values                                 */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    long long *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} EventBuffer;

static PyTypeObject EventBufferType;

static int
eb_reserve(EventBuffer *b, Py_ssize_t extra)
{
    Py_ssize_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1536;
    while (cap < need)
        cap *= 2;
    long long *d = PyMem_Realloc(b->data, (size_t)cap * sizeof(long long));
    if (d == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

static inline int
eb_push3(EventBuffer *b, long long x, long long y, long long z)
{
    if (b->len + 3 > b->cap && eb_reserve(b, 3) < 0)
        return -1;
    long long *p = b->data + b->len;
    p[0] = x;
    p[1] = y;
    p[2] = z;
    b->len += 3;
    return 0;
}

static void
eb_dealloc(EventBuffer *b)
{
    PyMem_Free(b->data);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static Py_ssize_t
eb_length(EventBuffer *b)
{
    return b->len;
}

static PyObject *
eb_item(EventBuffer *b, Py_ssize_t i)
{
    if (i < 0 || i >= b->len) {
        PyErr_SetString(PyExc_IndexError, "EventBuffer index out of range");
        return NULL;
    }
    return PyLong_FromLongLong(b->data[i]);
}

static int
as_int64(PyObject *v, long long *out)
{
    if (PyLong_Check(v))
        *out = PyLong_AsLongLong(v);
    else if (PyFloat_Check(v)) { /* np.fromiter(..., np.int64) of the list path truncates too */
        double x = PyFloat_AS_DOUBLE(v);
        if (!(x > -9.2e18 && x < 9.2e18)) { /* NaN, infinities, beyond int64 */
            PyErr_Format(PyExc_OverflowError, "EventBuffer: %R does not fit an int64", v);
            return -1;
        }
        *out = (long long)x;
        return 0;
    }
    else {
        PyObject *n = PyNumber_Index(v); /* NumPy integers; a str is a TypeError */
        if (n == NULL)
            return -1;
        *out = PyLong_AsLongLong(n);
        Py_DECREF(n);
    }
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* buf += (a, b, c, ...): every value converted first, so a record is appended whole or not */
static PyObject *
eb_inplace_concat(EventBuffer *b, PyObject *other)
{
    PyObject *seq = PySequence_Fast(other, "EventBuffer += takes a tuple or list of ints");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    long long small[16];
    long long *vals = n <= 16 ? small : PyMem_Malloc((size_t)n * sizeof(long long));
    if (vals == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++)
        rc = as_int64(items[i], &vals[i]);
    if (rc == 0)
        rc = eb_reserve(b, n);
    if (rc == 0) {
        memcpy(b->data + b->len, vals, (size_t)n * sizeof(long long));
        b->len += n;
    }
    if (vals != small)
        PyMem_Free(vals);
    Py_DECREF(seq);
    return rc == 0 ? Py_NewRef((PyObject *)b) : NULL;
}

/* the leading `stop` values of a slice buf[:stop] (step 1, from the start), or -1 */
static Py_ssize_t
eb_prefix(EventBuffer *b, PyObject *key)
{
    Py_ssize_t start, stop, step;
    if (!PySlice_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "EventBuffer takes slices buf[:n] only");
        return -1;
    }
    if (PySlice_Unpack(key, &start, &stop, &step) < 0)
        return -1;
    PySlice_AdjustIndices(b->len, &start, &stop, step);
    if (start != 0 || step != 1) {
        PyErr_SetString(PyExc_ValueError, "EventBuffer takes slices buf[:n] only");
        return -1;
    }
    return stop;
}

/* buf[:n]: the first n values as native int64 bytes (the buffer is unchanged) */
static PyObject *
eb_subscript(EventBuffer *b, PyObject *key)
{
    if (PyIndex_Check(key)) {
        Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        return eb_item(b, i < 0 ? i + b->len : i);
    }
    Py_ssize_t n = eb_prefix(b, key);
    if (n < 0)
        return NULL;
    return PyBytes_FromStringAndSize((const char *)b->data, n * (Py_ssize_t)sizeof(long long));
}

/* del buf[:n]: drop the first n values (what a flush moved into the store) in one step */
static int
eb_ass_subscript(EventBuffer *b, PyObject *key, PyObject *value)
{
    if (value != NULL) {
        PyErr_SetString(PyExc_TypeError, "EventBuffer: use `buf += (...)` to add values");
        return -1;
    }
    Py_ssize_t n = eb_prefix(b, key);
    if (n < 0)
        return -1;
    memmove(b->data, b->data + n, (size_t)(b->len - n) * sizeof(long long));
    b->len -= n;
    return 0;
}

static PyMappingMethods eb_as_mapping = {
    .mp_length = (lenfunc)eb_length,
    .mp_subscript = (binaryfunc)eb_subscript,
    .mp_ass_subscript = (objobjargproc)eb_ass_subscript,
};

static PySequenceMethods eb_as_sequence = {
    .sq_length = (lenfunc)eb_length,
    .sq_item = (ssizeargfunc)eb_item,
    .sq_inplace_concat = (binaryfunc)eb_inplace_concat,
};


static PyTypeObject EventBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.EventBuffer",
    .tp_basicsize = sizeof(EventBuffer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A thread's finished events as flat int64 values: `buf += (start, end, packed)`, "
              "len(), indexing, buf[:n] (the first n values as native int64 bytes, a copy) and "
              "del buf[:n] (what a flush moved into the store).",
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)eb_dealloc,
    .tp_as_sequence = &eb_as_sequence,
    .tp_as_mapping = &eb_as_mapping,
};

/* ------------------------------------------------------------------------------------------ */
/* ThreadState                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* A direct-mapped cache of keymap look-ups (module -> its keymap entry), valid for one keymap:
   the same modules are called every step, and a hit skips making an int of the module's id,
   hashing it and comparing it with the dict's key. An entry leaves a keymap only when its
   module dies (keymaps.Keymaps.forget), which calls drop_module_cache(): the cache is valid for
   one keymap and one generation, so a new module at a dead one's address is never a hit. */
#define KM_SLOTS 64
typedef struct {
    void *module; /* identity only, never dereferenced (like the keymap's id() keys) */
    PyObject *entry;
} KmSlot;

typedef struct {
    PyObject_HEAD
    PyObject *buf;
    PyObject *meta;
    PyObject *scope;
    PyObject *keymap;
    PyObject *km_owner; /* the keymap `km` caches, or NULL */
    Py_ssize_t km_gen;  /* the recorder's generation (drop_module_cache) when `km` was started */
    KmSlot km[KM_SLOTS];
    PyObject *root;
    PyObject *backward;
    PyObject *blocks;
    PyObject *open;
    Py_ssize_t depth;
    Py_ssize_t index;
    Py_ssize_t keep_below;
    Py_ssize_t flushed;
    long long flush_at;
} ThreadState;

static PyTypeObject ThreadStateType;
static PyTypeObject ModuleCallType;
static int close_abandoned_from(PyObject *recorder, ThreadState *t, Py_ssize_t depth);
static PyObject *too_deep(PyObject *recorder, Py_ssize_t depth);

static void
km_reset(ThreadState *t)
{
    for (int i = 0; i < KM_SLOTS; i++) {
        t->km[i].module = NULL;
        Py_CLEAR(t->km[i].entry);
    }
    Py_CLEAR(t->km_owner);
}

static inline KmSlot *
km_slot(ThreadState *t, PyObject *module)
{
    uintptr_t h = (uintptr_t)module;
    return &t->km[((h >> 4) ^ (h >> 10)) & (KM_SLOTS - 1)];
}

/* t->keymap's entry for `module` from the cache (a new reference), or NULL (no error set) */
static inline PyObject *
km_get(ThreadState *t, PyObject *module, Py_ssize_t gen)
{
    if (t->km_owner != t->keymap || t->km_gen != gen)
        return NULL;
    KmSlot *s = km_slot(t, module);
    return s->module == (void *)module ? Py_NewRef(s->entry) : NULL;
}

/* remember t->keymap's entry for `module` */
static void
km_put(ThreadState *t, PyObject *module, PyObject *entry, Py_ssize_t gen)
{
    if (t->km_owner != t->keymap || t->km_gen != gen) {
        km_reset(t);
        t->km_owner = Py_NewRef(t->keymap);
        t->km_gen = gen;
    }
    KmSlot *s = km_slot(t, module);
    s->module = (void *)module;
    Py_XSETREF(s->entry, Py_NewRef(entry));
}

static int
ts_init(ThreadState *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"index", "flush_at", NULL};
    Py_ssize_t index;
    long long flush_at;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nL", kwlist, &index, &flush_at))
        return -1;
    Py_XSETREF(self->buf, PyType_GenericNew(&EventBufferType, NULL, NULL));
    Py_XSETREF(self->meta, PyList_New(0));
    Py_XSETREF(self->blocks, PyList_New(0));
    Py_XSETREF(self->open, PyList_New(0));
    if (!self->buf || !self->meta || !self->blocks || !self->open)
        return -1;
    Py_XSETREF(self->scope, Py_NewRef(Py_None));
    Py_XSETREF(self->keymap, Py_NewRef(Py_None));
    Py_XSETREF(self->root, Py_NewRef(Py_None));
    Py_XSETREF(self->backward, Py_NewRef(Py_None));
    self->depth = 0;
    self->index = index;
    self->keep_below = 0;
    self->flushed = 0;
    self->flush_at = flush_at;
    return 0;
}

static int
ts_traverse(ThreadState *self, visitproc visit, void *arg)
{
    Py_VISIT(self->buf);
    Py_VISIT(self->meta);
    Py_VISIT(self->scope);
    Py_VISIT(self->keymap);
    Py_VISIT(self->km_owner);
    for (int i = 0; i < KM_SLOTS; i++)
        Py_VISIT(self->km[i].entry);
    Py_VISIT(self->root);
    Py_VISIT(self->backward);
    Py_VISIT(self->blocks);
    Py_VISIT(self->open);
    return 0;
}

static int
ts_clear(ThreadState *self)
{
    Py_CLEAR(self->buf);
    Py_CLEAR(self->meta);
    Py_CLEAR(self->scope);
    Py_CLEAR(self->keymap);
    km_reset(self);
    Py_CLEAR(self->root);
    Py_CLEAR(self->backward);
    Py_CLEAR(self->blocks);
    Py_CLEAR(self->open);
    return 0;
}

static void
ts_dealloc(ThreadState *self)
{
    PyObject_GC_UnTrack(self);
    ts_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef ts_members[] = {
    {"buf", T_OBJECT, offsetof(ThreadState, buf), 0, "finished events, flat (EventBuffer)"},
    {"meta", T_OBJECT, offsetof(ThreadState, meta), 0, "(event index on this thread, metadata)"},
    {"scope", T_OBJECT, offsetof(ThreadState, scope), 0, "(class, path) of the innermost module"},
    {"keymap", T_OBJECT, offsetof(ThreadState, keymap), 0, "id(module) -> entry, or None"},
    {"root", T_OBJECT, offsetof(ThreadState, root), 0, "the outermost module running"},
    {"backward", T_OBJECT, offsetof(ThreadState, backward), 0, "the backward pass running"},
    {"blocks", T_OBJECT, offsetof(ThreadState, blocks), READONLY,
     "(event index, store row, count)"},
    {"open", T_OBJECT, offsetof(ThreadState, open), READONLY, "open regions, innermost last"},
    {"depth", T_PYSSIZET, offsetof(ThreadState, depth), 0, "open events on this thread"},
    {"index", T_PYSSIZET, offsetof(ThreadState, index), 0, "row in the store's thread table"},
    {"keep_below", T_PYSSIZET, offsetof(ThreadState, keep_below), 0, "keep shallower events"},
    {"flushed", T_PYSSIZET, offsetof(ThreadState, flushed), 0, "events already in the store"},
    {"flush_at", T_LONGLONG, offsetof(ThreadState, flush_at), 0, "flush after this clock time"},
    {NULL}};

static PyTypeObject ThreadStateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.ThreadState",
    .tp_basicsize = sizeof(ThreadState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One thread's recording state (see py_recorder.PyThreadState).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)ts_init,
    .tp_traverse = (traverseproc)ts_traverse,
    .tp_clear = (inquiry)ts_clear,
    .tp_dealloc = (destructor)ts_dealloc,
    .tp_members = ts_members,
};

/* ------------------------------------------------------------------------------------------ */
/* ModuleCall: the base class of recorder.Recorder                                            */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *clock;
    PyObject *tensor;
    Py_tss_t *tss; /* this thread's ThreadState (borrowed: the recorder's _threads holds it) */
    Py_ssize_t flush_len;
    PyObject *region_keys; /* (kind, name) -> key (the recorder's _region_keys) */
    PyObject *roots;       /* id(outermost module) -> its keymap (_roots) */
    PyObject *bw_keys;     /* backward token -> key (_bw_keys) */
    /* the last region's (kind, name) objects and key, valid while region_keys is rk_keys: a
       region entered every step (an optimizer's) skips building, hashing and finding the pair */
    PyObject *rk_keys, *rk_kind, *rk_name;
    long long rk_key;
    Py_ssize_t data_off;   /* offset of Tensor's `data` slot in its instances, or 0 */
    PyObject *backward_region; /* (kind, name) of a backward pass's event */
    Py_ssize_t max_depth;  /* deepest nesting on one thread */
    Py_ssize_t generation; /* bumped by drop_module_cache() when a keymapped module dies */
    int mode;
    int clock_is_default;
    int general; /* module_call is the general Python path: api_record calls it by name */
    char fast;   /* regions and backward groups append straight to the buffer (_fast) */
    char python_roots;  /* every outermost module call goes through _root_call */
} ModuleCall;

static PyObject *
mc_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    ModuleCall *self = (ModuleCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->tss = PyThread_tss_alloc();
    if (self->tss == NULL || PyThread_tss_create(self->tss) != 0) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_RuntimeError, "could not create a thread-specific storage key");
        return NULL;
    }
    return (PyObject *)self;
}

/* this thread's state, a new reference, made by the Python recorder on first use */
static PyObject *
mc_state_ref(ModuleCall *self, int create)
{
    PyObject *t = self->tss ? (PyObject *)PyThread_tss_get(self->tss) : NULL;
    if (t != NULL)
        return Py_NewRef(t);
    if (!create)
        return Py_NewRef(Py_None);
    return PyObject_CallMethodNoArgs((PyObject *)self, str_new_state);
}

static PyObject *
mc_state(ModuleCall *self, PyObject *unused)
{
    return mc_state_ref(self, 1);
}

static PyObject *
mc_peek_state(ModuleCall *self, PyObject *unused)
{
    return mc_state_ref(self, 0);
}

static PyObject *
mc_remember_state(ModuleCall *self, PyObject *t)
{
    if (!PyObject_TypeCheck(t, &ThreadStateType)) {
        PyErr_SetString(PyExc_TypeError, "_remember_state takes a _crecorder.ThreadState");
        return NULL;
    }
    if (self->tss == NULL) /* stopped: its key is given back; a late event keeps no state */
        Py_RETURN_NONE;
    if (PyThread_tss_set(self->tss, t) != 0) {
        PyErr_SetString(PyExc_RuntimeError, "could not set thread-specific storage");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* hook protocol: the token autograd nodes store (the innermost module's (class, path)) */
static PyObject *
mc_scope(ModuleCall *self, PyObject *unused)
{
    ThreadState *t = self->tss ? (ThreadState *)PyThread_tss_get(self->tss) : NULL;
    if (t == NULL || t->scope == NULL)
        Py_RETURN_NONE;
    return Py_NewRef(t->scope);
}

/* give the thread-specific key back when recording stops (keys are a bounded OS resource,
   and a stopped recorder may be kept alive by its Profiler for a long time) */
static PyObject *
mc_release_thread_storage(ModuleCall *self, PyObject *unused)
{
    if (self->tss != NULL) {
        PyThread_tss_delete(self->tss);
        PyThread_tss_free(self->tss);
        self->tss = NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
mc_init_thread_storage(ModuleCall *self, PyObject *unused)
{
    Py_RETURN_NONE; /* the key is made with the object */
}

static int
mc_traverse(ModuleCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->clock);
    Py_VISIT(self->tensor);
    Py_VISIT(self->region_keys);
    Py_VISIT(self->roots);
    Py_VISIT(self->bw_keys);
    Py_VISIT(self->backward_region);
    Py_VISIT(self->rk_keys);
    Py_VISIT(self->rk_kind);
    Py_VISIT(self->rk_name);
    return 0;
}

static int
mc_clear(ModuleCall *self)
{
    Py_CLEAR(self->clock);
    Py_CLEAR(self->tensor);
    Py_CLEAR(self->region_keys);
    Py_CLEAR(self->roots);
    Py_CLEAR(self->bw_keys);
    Py_CLEAR(self->backward_region);
    Py_CLEAR(self->rk_keys);
    Py_CLEAR(self->rk_kind);
    Py_CLEAR(self->rk_name);
    return 0;
}

static void
mc_dealloc(ModuleCall *self)
{
    /* a Python subclass's dealloc untracks, and drops the reference to its type after this */
    PyObject_GC_UnTrack(self);
    mc_clear(self);
    if (self->tss != NULL) {
        PyThread_tss_delete(self->tss);
        PyThread_tss_free(self->tss);
        self->tss = NULL;
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
mc_get_clock(ModuleCall *self, void *closure)
{
    return Py_NewRef(self->clock ? self->clock : Py_None);
}

static void
set_clock(ModuleCall *self, PyObject *value)
{
    Py_XSETREF(self->clock, Py_NewRef(value));
#ifdef __linux__
    self->clock_is_default = (value == perf_counter_ns);
#else
    self->clock_is_default = 0;
#endif
}

static PyObject *
mc_get_tensor(ModuleCall *self, void *closure)
{
    return Py_NewRef(self->tensor ? self->tensor : Py_None);
}

/* the Tensor class; where its `data` is a __slots__ member, its offset is kept so that the shape
   cache can read a Tensor's array without an attribute lookup */
static int
set_tensor(ModuleCall *self, PyObject *value)
{
    Py_XSETREF(self->tensor, Py_NewRef(value));
    self->data_off = 0;
    if (PyType_Check(value)) {
        PyObject *d = PyDict_GetItemWithError(((PyTypeObject *)value)->tp_dict, str_data);
        if (d == NULL && PyErr_Occurred())
            return -1;
        if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)) {
            PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
            if (m->type == T_OBJECT_EX || m->type == T_OBJECT)
                self->data_off = m->offset;
        }
    }
    return 0;
}

/* configure(**options): the one way Python sets what this code reads. The names are
   contract.OPTIONS; the Python twin checks the same rules (contract.check_options) with the
   same messages. Every value is checked before any is applied. */
enum {
    OPT_CLOCK, OPT_TENSOR, OPT_MODE, OPT_FAST, OPT_GENERAL, OPT_PYTHON_ROOTS, OPT_FLUSH_LEN,
    OPT_MAX_DEPTH, OPT_REGION_KEYS, OPT_ROOTS, OPT_BW_KEYS, OPT_BACKWARD_REGION, N_OPTIONS
};
static const char *const option_names[N_OPTIONS] = {
    "clock", "tensor", "mode", "fast", "general", "python_roots", "flush_len",
    "max_depth", "region_keys", "roots", "bw_keys", "backward_region"};
static PyObject *option_keys[N_OPTIONS]; /* the names, interned (keywords usually are) */
#define MAX_DEPTH_LIMIT 32767 /* the store keeps depth as int16 */

static int
option_error(PyObject *kind, int i, const char *what, PyObject *v)
{
    if (kind == PyExc_TypeError)
        PyErr_Format(kind, "configure: %s must be %s, not %.100s", option_names[i], what,
                     Py_TYPE(v)->tp_name);
    else
        PyErr_Format(kind, "configure: %s must be %s, not %R", option_names[i], what, v);
    return -1;
}

/* an int (not a bool) in [lo, hi] */
static int
check_int(int i, PyObject *v, Py_ssize_t lo, Py_ssize_t hi, const char *what)
{
    if (!PyLong_Check(v) || PyBool_Check(v))
        return option_error(PyExc_TypeError, i, what, v);
    Py_ssize_t n = PyLong_AsSsize_t(v);
    if (n == -1 && PyErr_Occurred())
        PyErr_Clear(); /* beyond Py_ssize_t: out of range */
    else if (n >= lo && n <= hi)
        return 0;
    return option_error(PyExc_ValueError, i, what, v);
}

static int
check_option(int i, PyObject *v)
{
    switch (i) {
    case OPT_CLOCK:
        return PyCallable_Check(v) ? 0 : option_error(PyExc_TypeError, i, "a callable", v);
    case OPT_TENSOR:
        return v == Py_None || PyType_Check(v) ? 0
                                               : option_error(PyExc_TypeError, i, "a class or None", v);
    case OPT_MODE:
        return check_int(i, v, 0, MODE_SHAPES, "0, 1 or 2");
    case OPT_FAST:
    case OPT_GENERAL:
    case OPT_PYTHON_ROOTS:
        return PyBool_Check(v) ? 0 : option_error(PyExc_TypeError, i, "True or False", v);
    case OPT_FLUSH_LEN:
        return check_int(i, v, 1, PY_SSIZE_T_MAX, "an int from 1 to sys.maxsize");
    case OPT_MAX_DEPTH:
        return check_int(i, v, 1, MAX_DEPTH_LIMIT, "an int from 1 to 32767");
    case OPT_BACKWARD_REGION:
        if (PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v) == 2 &&
            PyUnicode_Check(PyTuple_GET_ITEM(v, 0)) && PyUnicode_Check(PyTuple_GET_ITEM(v, 1)))
            return 0;
        return option_error(PyExc_TypeError, i, "a (kind, name) tuple of two str", v);
    default: /* region_keys, roots, bw_keys: dicts shared with the Python policy */
        return PyDict_Check(v) ? 0 : option_error(PyExc_TypeError, i, "a dict", v);
    }
}

static int
apply_option(ModuleCall *self, int i, PyObject *v)
{
    switch (i) {
    case OPT_CLOCK:
        set_clock(self, v);
        return 0;
    case OPT_TENSOR:
        return set_tensor(self, v);
    case OPT_MODE:
        self->mode = (int)PyLong_AsLong(v);
        return 0;
    case OPT_FAST:
        self->fast = v == Py_True;
        return 0;
    case OPT_GENERAL:
        self->general = v == Py_True;
        return 0;
    case OPT_PYTHON_ROOTS:
        self->python_roots = v == Py_True;
        return 0;
    case OPT_FLUSH_LEN:
        self->flush_len = PyLong_AsSsize_t(v);
        return 0;
    case OPT_MAX_DEPTH:
        self->max_depth = PyLong_AsSsize_t(v);
        return 0;
    case OPT_REGION_KEYS:
        Py_XSETREF(self->region_keys, Py_NewRef(v));
        return 0;
    case OPT_ROOTS:
        Py_XSETREF(self->roots, Py_NewRef(v));
        return 0;
    case OPT_BW_KEYS:
        Py_XSETREF(self->bw_keys, Py_NewRef(v));
        return 0;
    default:
        Py_XSETREF(self->backward_region, Py_NewRef(v));
        return 0;
    }
}

static PyObject *
mc_configure(ModuleCall *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "configure() takes keyword arguments only");
        return NULL;
    }
    PyObject *values[N_OPTIONS] = {NULL};
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kwds != NULL && PyDict_Next(kwds, &pos, &k, &v)) {
        int i = 0;
        while (i < N_OPTIONS && k != option_keys[i])
            i++;
        if (i == N_OPTIONS) /* a name built at run time: compare the text */
            for (i = 0; i < N_OPTIONS && PyUnicode_Compare(k, option_keys[i]) != 0; i++)
                ;
        if (i == N_OPTIONS) {
            PyErr_Format(PyExc_TypeError, "configure: unknown option %R", k);
            return NULL;
        }
        if (check_option(i, v) < 0)
            return NULL;
        values[i] = v;
    }
    for (int i = 0; i < N_OPTIONS; i++)
        if (values[i] != NULL && apply_option(self, i, values[i]) < 0)
            return NULL;
    Py_RETURN_NONE;
}

/* drop_module_cache(): a keymapped module died; no cached look-up may be used again */
static PyObject *
mc_drop_module_cache(ModuleCall *self, PyObject *unused)
{
    self->generation++;
    Py_RETURN_NONE;
}

/* now on the recorder's clock; -1 with an exception set on failure */
static inline long long
now_ns(ModuleCall *self)
{
#ifdef __linux__
    if (self->clock_is_default) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* what time.perf_counter_ns reads on Linux */
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    }
#endif
    if (self->clock == NULL) {
        PyErr_SetString(PyExc_TypeError, "the recorder has no clock (_clock was never set)");
        return -1;
    }
    PyObject *r = PyObject_CallNoArgs(self->clock);
    if (r == NULL)
        return -1;
    long long v = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred())
        return -1;
    return v;
}

/* append one record (start, end, packed) to the thread's buffer: an EventBuffer, or a list
   where Python code replaced it with one (the record is never split either way) */
static int
append3(ThreadState *t, long long a, long long b, long long packed)
{
    PyObject *buf = t->buf;
    if (buf != NULL && Py_IS_TYPE(buf, &EventBufferType))
        return eb_push3((EventBuffer *)buf, a, b, packed);
    if (buf == NULL || !PyList_CheckExact(buf)) {
        PyErr_SetString(PyExc_TypeError, "ThreadState.buf must be an EventBuffer or a list");
        return -1;
    }
    PyObject *rec = Py_BuildValue("(LLL)", a, b, packed);
    if (rec == NULL)
        return -1;
    PyObject *r = PySequence_InPlaceConcat(buf, rec);
    Py_DECREF(rec);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

static PyObject *
getattr_default(PyObject *obj, PyObject *name, PyObject *dflt)
{
    PyObject *r;
    if (PyObject_GetOptionalAttr(obj, name, &r) < 0)
        return NULL;
    return r ? r : Py_NewRef(dflt);
}

/* `x.data.<name>` of a Tensor: its array's shape or dtype */
static PyObject *
tensor_attr(PyObject *x, PyObject *name)
{
    PyObject *data = PyObject_GetAttr(x, str_data);
    if (data == NULL)
        return NULL;
    PyObject *value = PyObject_GetAttr(data, name);
    Py_DECREF(data);
    return value;
}

static PyObject *
tensor_shape(PyObject *x)
{
    return tensor_attr(x, str_shape);
}

/* `x.data.dtype` of a Tensor, or `x.dtype` (None when it has none) */
static PyObject *
dtype_of(PyObject *x, int tensor)
{
    return tensor ? tensor_attr(x, str_dtype) : getattr_default(x, str_dtype, Py_None);
}

/* a Tensor's array (borrowed) when it is a NumPy array whose dims can be read in place */
static inline PyObject *
tensor_ndarray(ModuleCall *self, PyObject *x)
{
    if (self->data_off <= 0 || ndarray_t == NULL || (PyObject *)Py_TYPE(x) != self->tensor)
        return NULL;
    PyObject *d = *(PyObject **)((char *)x + self->data_off);
    return (d != NULL && Py_IS_TYPE(d, ndarray_t)) ? d : NULL;
}

/* does the shape tuple `tup` (cached from an earlier call) equal the array's dims? */
static int
dims_equal(PyObject *tup, PyObject *arr)
{
    NdPrefix *a = (NdPrefix *)arr;
    if (!PyTuple_CheckExact(tup) || PyTuple_GET_SIZE(tup) != a->nd)
        return 0;
    for (int i = 0; i < a->nd; i++) {
        PyObject *v = PyTuple_GET_ITEM(tup, i);
        if (!PyLong_CheckExact(v))
            return 0;
        Py_ssize_t n = PyLong_AsSsize_t(v);
        if (n == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        if (n != a->dimensions[i])
            return 0;
    }
    return 1;
}

/* whether the error set was raised by the program's signal handler while a read ran Python
   code (everyo.profiler.recording.own_errors decides): then it is the program's, never cleared */
static PyObject *program_error = NULL; /* own_errors.raised_by_signal_handler (bind_regions) */

static int
raised_by_handler(void)
{
    PyObject *decide = program_error;
    if (decide == NULL)
        return 0;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    int yes = 0;
    PyObject *r = value ? PyObject_CallOneArg(decide, value) : NULL;
    if (r != NULL)
        yes = PyObject_IsTrue(r) == 1;
    Py_XDECREF(r);
    PyErr_Clear(); /* (the question's own failure: the read's error stays as it was) */
    PyErr_Restore(type, value, tb);
    return yes;
}

/* an error raised while reading shapes: an Exception is cleared (0: the profiler never turns a
   call that succeeded into an error) unless the program's signal handler raised it; anything
   else, an interrupt, stays set (-1) */
static int
not_an_interrupt(void)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception) || raised_by_handler())
        return -1;
    PyErr_Clear();
    return 0;
}

/* the shapes and dtypes the single-input cache compares, as new references: 1 when the input's
   and the output's shapes are both tuples (or tuple subclasses, such as torch.Size); 0 (all
   NULL) when this call is not cached (no tuple shape, such as a list of tensors, or a `.shape`
   or `.dtype` that raised an Exception, cleared); -1 (an interrupt while reading them) */
static int
single_shapes(ModuleCall *self, PyObject *a, PyObject *out, PyObject **as, PyObject **os,
              PyObject **ad, PyObject **od)
{
    PyObject *T = self->tensor;
    int tensors = T != NULL && (PyObject *)Py_TYPE(a) == T && (PyObject *)Py_TYPE(out) == T;
    *os = *ad = *od = NULL;
    *as = tensors ? tensor_shape(a) : getattr_default(a, str_shape, Py_None);
    if (*as != NULL)
        *os = tensors ? tensor_shape(out) : getattr_default(out, str_shape, Py_None);
    if (*os == NULL) {
        Py_CLEAR(*as);
        return not_an_interrupt();
    }
    if (PyTuple_Check(*as) && PyTuple_Check(*os)) { /* tuple subclasses too: torch.Size */
        *ad = dtype_of(a, tensors);
        *od = *ad ? dtype_of(out, tensors) : NULL;
        if (*od != NULL)
            return 1;
        Py_CLEAR(*ad);
        Py_CLEAR(*as);
        Py_CLEAR(*os);
        return not_an_interrupt();
    }
    Py_CLEAR(*as);
    Py_CLEAR(*os);
    return 0;
}

/* a packed value from the shape cache (written by the recorder itself, so an int within int64):
   its bits, without the byte-array conversion PyLong_AsLongLong makes of a multi-digit int */
static inline long long
cached_packed(PyObject *v)
{
    if (!PyLong_CheckExact(v)) {
        PyErr_SetString(PyExc_TypeError, "recorder shape cache: packed value must be an int");
        return -1;
    }
    return (long long)PyLong_AsUnsignedLongLongMask(v);
}

/* pack(key, depth, shape_id) of everyo.profiler.recording.packing */
static inline long long
pack3(long long key, Py_ssize_t depth, long long sid)
{
    return (long long)((unsigned long long)key | ((unsigned long long)depth << KEY_BITS) |
                       ((unsigned long long)(sid + 1) << SHAPE_SHIFT));
}

/* After the Python policy failed to record an event (an interrupt landed in it): keep the event
   anyway when an event inside it was kept (depth < keep_below), so that those keep their parent.
   The error stays set. */
static void
keep_if_parent(ModuleCall *p, ThreadState *t, long long start, long long end, long long key,
               Py_ssize_t depth)
{
    if (depth >= t->keep_below)
        return;
    PyObject *exc = PyErr_GetRaisedException();
    if (!p->fast) { /* the buffer may hold more than three fields an event (record_ops, memory):
                       the Python recorder appends it with its width (issue 44) */
        PyObject *r = PyObject_CallMethod((PyObject *)p, "_keep_anyway", "OLLLn", (PyObject *)t,
                                          start, end, key, depth);
        if (r == NULL)
            PyErr_Clear(); /* (the interrupt is what the program sees) */
        Py_XDECREF(r);
    }
    else if (append3(t, start, end, pack3(key, depth, -1)) == 0)
        t->keep_below = depth;
    else
        PyErr_Clear(); /* (a MemoryError: the interrupt is what the program sees) */
    PyErr_SetRaisedException(exc);
}

/* kwargs as given, or a new empty dict for the Python recorder's methods (they take a dict) */
static PyObject *
kwargs_for_python(PyObject *kwargs)
{
    return kwargs ? Py_NewRef(kwargs) : PyDict_New();
}

/* the callable a module event runs: `forward` as given, or the module's bound forward */
static PyObject *
forward_of(PyObject *module, PyObject *forward)
{
    return forward ? Py_NewRef(forward) : PyObject_GetAttr(module, str_forward);
}

/* call the module's forward (`forward`, or module.forward when NULL) with args/kwargs */
static PyObject *
call_forward(PyObject *module, PyObject *forward, PyObject *args, PyObject *kwargs, int one)
{
    if (one) {
        PyObject *x = PyTuple_GET_ITEM(args, 0);
        if (forward)
            return PyObject_CallOneArg(forward, x);
        PyObject *stack[2] = {module, x};
        return PyObject_VectorcallMethod(str_forward, stack, 2, NULL);
    }
    PyObject *f = forward_of(module, forward);
    if (f == NULL)
        return NULL;
    PyObject *out = PyObject_Call(f, args, kwargs);
    Py_DECREF(f);
    return out;
}

/* One module event: Recorder.module_call's compiled body. `forward` NULL means the module's
   own forward (the engine's call of a module without hooks); `kwargs` may be NULL, None or a dict. */
static PyObject *
mc_record(ModuleCall *self, PyObject *module, PyObject *forward, PyObject *args,
          PyObject *kwargs)
{
    if (!PyTuple_Check(args)) { /* (recorder.check_call_args says the same in Python) */
        PyErr_Format(PyExc_TypeError, "module_call: args must be a tuple, not %.100s",
                     Py_TYPE(args)->tp_name);
        return NULL;
    }
    if (kwargs == Py_None)
        kwargs = NULL;
    if (kwargs != NULL && !PyDict_Check(kwargs)) { /* a mapping: call with a dict of it */
        PyObject *keys;
        if (PyObject_GetOptionalAttr(kwargs, str_keys, &keys) < 0)
            return NULL;
        if (keys == NULL) {
            PyErr_Format(PyExc_TypeError, "module_call: kwargs must be a mapping or None, not %.100s",
                         Py_TYPE(kwargs)->tp_name);
            return NULL;
        }
        Py_DECREF(keys);
        PyObject *d = PyDict_New();
        if (d == NULL || PyDict_Merge(d, kwargs, 1) < 0) {
            Py_XDECREF(d);
            return NULL;
        }
        PyObject *r = mc_record(self, module, forward, args, d);
        Py_DECREF(d);
        return r;
    }
    PyObject *self_obj = (PyObject *)self;

    /* this thread's state (made by self._new_state() on the thread's first event) */
    PyObject *t_obj = mc_state_ref(self, 1);
    if (t_obj == NULL)
        return NULL;
    if (!PyObject_TypeCheck(t_obj, &ThreadStateType)) {
        Py_DECREF(t_obj);
        PyErr_SetString(PyExc_TypeError, "recorder thread state is not a _crecorder.ThreadState");
        return NULL;
    }
    ThreadState *t = (ThreadState *)t_obj;

    if (t->keymap == NULL || t->keymap == Py_None) { /* the outermost module */
        if (!self->python_roots && self->roots != NULL && PyDict_Check(self->roots)) {
            /* its keymap is known: _root_call without Python */
            PyObject *rid = PyLong_FromVoidPtr(module);
            PyObject *km = rid ? PyDict_GetItemWithError(self->roots, rid) : NULL;
            Py_XDECREF(rid);
            if (km != NULL) {
                Py_XSETREF(t->keymap, Py_NewRef(km));
                Py_XSETREF(t->root, Py_NewRef(module));
                PyObject *r = mc_record(self, module, forward, args, kwargs);
                Py_XSETREF(t->keymap, Py_NewRef(Py_None));
                Py_XSETREF(t->root, Py_NewRef(Py_None));
                Py_DECREF(t_obj);
                return r;
            }
            if (PyErr_Occurred()) {
                Py_DECREF(t_obj);
                return NULL;
            }
        }
        PyObject *f = forward_of(module, forward);
        PyObject *kw = f ? kwargs_for_python(kwargs) : NULL;
        PyObject *r = kw ? PyObject_CallMethodObjArgs(self_obj, str_root_call, t_obj, module, f,
                                                      args, kw, NULL)
                         : NULL;
        Py_XDECREF(f);
        Py_XDECREF(kw);
        Py_DECREF(t_obj);
        return r;
    }

    /* entry = keymap.get(id(module)) or self._unlisted(t, module) */
    PyObject *entry = km_get(t, module, self->generation);
    if (entry == NULL && PyDict_Check(t->keymap)) {
        PyObject *mid = PyLong_FromVoidPtr(module);
        if (mid == NULL) {
            Py_DECREF(t_obj);
            return NULL;
        }
        entry = PyDict_GetItemWithError(t->keymap, mid);
        Py_DECREF(mid);
        Py_XINCREF(entry); /* ours before km_put drops the entries it held */
        if (entry != NULL)
            km_put(t, module, entry, self->generation);
    }
    if (entry == NULL) {
        if (PyErr_Occurred()) {
            Py_DECREF(t_obj);
            return NULL;
        }
        entry = PyObject_CallMethodObjArgs(self_obj, str_unlisted, t_obj, module, NULL);
        if (entry == NULL) {
            Py_DECREF(t_obj);
            return NULL;
        }
    }
    PyObject *kw = NULL; /* kwargs_for_python(kwargs), made when a Python method needs it */
    PyObject *out = NULL;
    PyObject *last = NULL; /* the shape cache's entry, our reference (Python code may replace it) */
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3) {
        PyErr_SetString(PyExc_TypeError, "recorder keymap entry must be (key, scope, [last])");
        goto fail;
    }
    PyObject *key_obj = PyTuple_GET_ITEM(entry, 0);
    long long key = PyLong_AsLongLong(key_obj);
    if (key == -1 && PyErr_Occurred())
        goto fail;

    Py_ssize_t depth = t->depth;
    if (depth >= self->max_depth) { /* the store keeps depth as int16: never wrap silently */
        too_deep(self_obj, depth);
        goto fail;
    }
    t->depth = depth + 1;
    PyObject *prev = t->scope ? t->scope : Py_NewRef(Py_None); /* our reference now */
    t->scope = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    int one = nargs == 1 && (kwargs == NULL || (PyDict_Check(kwargs) && PyDict_GET_SIZE(kwargs) == 0));

    long long start = now_ns(self);
    if (start == -1 && PyErr_Occurred()) { /* nothing ran: restore the thread, record nothing */
        t->depth = depth;
        Py_XSETREF(t->scope, prev);
        goto fail;
    }
    out = call_forward(module, forward, args, kwargs, one);
    long long end = out ? now_ns(self) : -1;
    if (out != NULL && end == -1 && PyErr_Occurred())
        Py_CLEAR(out); /* the clock failed: recorded as a call that raised its error */
    /* restore the thread before any Python code runs (an interrupt there loses events only) */
    t->depth = depth;
    Py_XSETREF(t->scope, prev); /* prev's reference goes back to the thread state */
    if (out == NULL) { /* self._failed(t, key, depth, start, prev); raise */
        PyObject *exc = PyErr_GetRaisedException();
        int rc;
        if (self->mode) { /* recording everything: kept here, with no Python code to interrupt */
            rc = close_abandoned_from(self_obj, t, depth + 1);
            long long now = rc == 0 ? now_ns(self) : -1;
            if (rc == 0 && now == -1 && PyErr_Occurred())
                rc = -1;
            if (rc == 0)
                rc = append3(t, start, now, pack3(key, depth, -1));
        }
        else {
            PyObject *r = PyObject_CallMethod(self_obj, "_failed", "OOnLO", t_obj, key_obj,
                                              depth, start, t->scope);
            rc = r ? 0 : -1;
            Py_XDECREF(r);
            if (rc < 0) {
                PyObject *err = PyErr_GetRaisedException();
                long long now = now_ns(self);
                if (now == -1 && PyErr_Occurred()) {
                    PyErr_Clear(); /* (the first error is the one raised) */
                    now = start;
                }
                PyErr_SetRaisedException(err);
                keep_if_parent(self, t, start, now, key, depth);
            }
        }
        if (rc < 0)
            Py_XDECREF(exc); /* the recorder's own error wins, as `raise` in Python would */
        else
            PyErr_SetRaisedException(exc);
        goto fail;
    }
    if (close_abandoned_from(self_obj, t, depth + 1) < 0) /* regions left open inside it */
        goto fail;

    int mode = self->mode;
    long long packed = 0;
    if (mode == MODE_SHAPES) {
        /* [((a, o, depth, a dtype, o dtype), packed)] */
        PyObject *slot = PyTuple_GET_ITEM(entry, 2);
        PyObject *lastcur = NULL;
        if (one && PyList_Check(slot) && PyList_GET_SIZE(slot) == 1) {
            PyObject *item = PyList_GET_ITEM(slot, 0);
            if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2) {
                lastcur = PyTuple_GET_ITEM(item, 0);
                if (!PyTuple_Check(lastcur) || PyTuple_GET_SIZE(lastcur) != 5)
                    lastcur = NULL;
                else
                    last = Py_NewRef(item);
            }
        }
        PyObject *a = one ? PyTuple_GET_ITEM(args, 0) : NULL;
        int same = -2; /* not decided */
        if (lastcur != NULL) {
            /* the common case, without building shape tuples: NumPy arrays in Tensors */
            PyObject *d = PyTuple_GET_ITEM(lastcur, 2);
            PyObject *an = tensor_ndarray(self, a), *on = an ? tensor_ndarray(self, out) : NULL;
            if (!(PyLong_CheckExact(d) && PyLong_AsSsize_t(d) == depth))
                same = 0;
            else if (on != NULL)
                same = dims_equal(PyTuple_GET_ITEM(lastcur, 0), an) &&
                       dims_equal(PyTuple_GET_ITEM(lastcur, 1), on) &&
                       ((NdPrefix *)an)->descr == PyTuple_GET_ITEM(lastcur, 3) &&
                       ((NdPrefix *)on)->descr == PyTuple_GET_ITEM(lastcur, 4);
        }
        if (same == 1) {
            packed = cached_packed(PyTuple_GET_ITEM(last, 1));
            if (packed == -1 && PyErr_Occurred())
                goto unshaped;
        }
        else if (one) {
            PyObject *ashape, *oshape, *adtype, *odtype;
            int ok = single_shapes(self, a, out, &ashape, &oshape, &adtype, &odtype);
            if (ok < 0)
                goto unshaped;
            if (ok == 1 && same == -2 && lastcur != NULL) { /* objects with a Python-level shape */
                same = PyObject_RichCompareBool(PyTuple_GET_ITEM(lastcur, 0), ashape, Py_EQ);
                if (same == 1)
                    same = PyObject_RichCompareBool(PyTuple_GET_ITEM(lastcur, 1), oshape, Py_EQ);
                if (same == 1) /* (dtypes: torch's and NumPy's builtin ones are singletons) */
                    same = PyObject_RichCompareBool(PyTuple_GET_ITEM(lastcur, 3), adtype, Py_EQ);
                if (same == 1)
                    same = PyObject_RichCompareBool(PyTuple_GET_ITEM(lastcur, 4), odtype, Py_EQ);
                if (same == 1) {
                    packed = cached_packed(PyTuple_GET_ITEM(last, 1));
                    if (packed == -1 && PyErr_Occurred())
                        same = -1;
                }
                if (same < 0) {
                    ok = not_an_interrupt();
                    same = 0;
                }
            }
            if (ok >= 0 && same != 1) {
                kw = kwargs_for_python(kwargs);
                PyObject *sid = kw ? PyObject_CallMethodObjArgs(self_obj, str_shape_id, args, kw,
                                                                out, NULL)
                                   : NULL;
                long long sidv = sid ? PyLong_AsLongLong(sid) : -1;
                Py_XDECREF(sid);
                if (sid == NULL || (sidv == -1 && PyErr_Occurred()))
                    ok = -1;
                else
                    packed = pack3(key, depth, sidv);
                if (ok == 1 && PyList_Check(slot) && PyList_GET_SIZE(slot) == 1) {
                    PyObject *pair = Py_BuildValue("((OOnOO)L)", ashape, oshape, depth, adtype,
                                                   odtype, packed);
                    if (pair == NULL || PyList_SetItem(slot, 0, pair) < 0) /* steals pair */
                        ok = -1;
                }
            }
            Py_XDECREF(ashape);
            Py_XDECREF(oshape);
            Py_XDECREF(adtype);
            Py_XDECREF(odtype);
            if (ok < 0)
                goto unshaped;
        }
        else {
            kw = kwargs_for_python(kwargs);
            PyObject *sid = kw ? PyObject_CallMethodObjArgs(self_obj, str_shape_id, args, kw,
                                                            out, NULL)
                               : NULL;
            if (sid == NULL)
                goto unshaped;
            long long sidv = PyLong_AsLongLong(sid);
            Py_DECREF(sid);
            if (sidv == -1 && PyErr_Occurred())
                goto unshaped;
            packed = pack3(key, depth, sidv);
        }
    }
    else if (mode) {
        packed = (long long)((unsigned long long)key | ((unsigned long long)depth << KEY_BITS));
    }
    else { /* mode 0 (warmup, schedule, stopped): the Python policy decides */
        kw = kwargs_for_python(kwargs);
        PyObject *s = kw ? PyLong_FromLongLong(start) : NULL;
        PyObject *e = s ? PyLong_FromLongLong(end) : NULL;
        PyObject *d = e ? PyLong_FromSsize_t(depth) : NULL;
        PyObject *r = NULL;
        if (d != NULL) { /* self._emit_call(t, args, kwargs, out, start, end, key, depth) */
            PyObject *stack[9] = {self_obj, t_obj, args, kw, out, s, e, key_obj, d};
            r = PyObject_VectorcallMethod(str_emit_call, stack, 9, NULL);
        }
        Py_XDECREF(s);
        Py_XDECREF(e);
        Py_XDECREF(d);
        if (r == NULL)
            goto policy_failed;
        Py_DECREF(r);
        goto done;
    }

    if (append3(t, start, end, packed) < 0)
        goto fail;
    Py_ssize_t buffered = Py_IS_TYPE(t->buf, &EventBufferType) ? ((EventBuffer *)t->buf)->len
                                                               : PyObject_Length(t->buf);
    if (buffered < 0)
        goto fail;
    if (buffered >= self->flush_len || end > t->flush_at) {
        PyObject *r = PyObject_CallMethod(self_obj, "_flush", "OL", t_obj, end);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
done:
    Py_XDECREF(last);
    Py_XDECREF(kw);
    Py_DECREF(entry);
    Py_DECREF(t_obj);
    return out;

policy_failed: /* the Python policy could not record it (an interrupt in it, say) */
    keep_if_parent(self, t, start, end, key, depth);
    goto fail;
unshaped: /* its shapes could not be read (an interrupt, say): the event is kept without them,
             so that the events recorded inside it keep their parent; then the error is raised */
    {
        PyObject *exc = PyErr_GetRaisedException();
        if (append3(t, start, end, pack3(key, depth, -1)) < 0)
            Py_XDECREF(exc); /* the recorder's own error wins */
        else
            PyErr_SetRaisedException(exc);
    }
fail:
    Py_XDECREF(last);
    Py_XDECREF(kw);
    Py_XDECREF(out);
    Py_DECREF(entry);
    Py_DECREF(t_obj);
    return NULL;
}

static PyObject *
mc_module_call(ModuleCall *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 4) {
        PyErr_SetString(PyExc_TypeError, "module_call(module, forward, args, kwargs)");
        return NULL;
    }
    return mc_record(self, argv[0], argv[1], argv[2], argv[3]);
}

/* ------------------------------------------------------------------------------------------ */
/* Regions and backward groups: events without tensors                                         */
/* ------------------------------------------------------------------------------------------ */

static PyObject *str_region_key, *str_region_too_deep, *str_bw_key, *str_enter, *str_scope,
    *str_kind, *str_name, *str_user, *close_out_of_order, *close_abandoned;

static Py_ssize_t
buffered_len(ThreadState *t)
{
    if (t->buf == NULL) {
        PyErr_SetString(PyExc_TypeError, "ThreadState.buf is not set");
        return -1;
    }
    return Py_IS_TYPE(t->buf, &EventBufferType) ? ((EventBuffer *)t->buf)->len
                                                : PyObject_Length(t->buf);
}

/* Recorder._emit_region's body: appended while everything is recorded (`fast`), else the
   Python method decides (warmup, schedule, extra columns). Regions check the buffer's size and
   age; backward groups leave that to the end of their pass. */
static int
emit_simple(ModuleCall *p, ThreadState *t, long long start, long long end, long long key,
            Py_ssize_t depth, PyObject *meta, int check_flush)
{
    if (meta == NULL)
        meta = Py_None;
    if (!p->fast) {
        PyObject *r = PyObject_CallMethod((PyObject *)p, "_emit_region", "OLLLnO", (PyObject *)t,
                                          start, end, key, depth, meta);
        Py_XDECREF(r);
        if (r == NULL)
            keep_if_parent(p, t, start, end, key, depth);
        return r ? 0 : -1;
    }
    int truth = meta == Py_None ? 0 : PyObject_IsTrue(meta);
    if (truth < 0)
        return -1;
    Py_ssize_t n = truth ? buffered_len(t) : 0; /* the new event's index among the thread's */
    if (n < 0)
        return -1;
    if (append3(t, start, end, (long long)((unsigned long long)key | ((unsigned long long)depth << KEY_BITS))) < 0)
        return -1;
    if (truth) { /* after the event: a failure here loses its metadata, never misfiles it */
        PyObject *pair = Py_BuildValue("(nO)", t->flushed + n / 3, meta);
        if (pair == NULL)
            return -1;
        int rc = t->meta && PyList_Check(t->meta) ? PyList_Append(t->meta, pair) : -1;
        if (rc < 0 && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "ThreadState.meta must be a list");
        Py_DECREF(pair);
        if (rc < 0)
            return -1;
    }
    if (!check_flush)
        return 0;
    n = buffered_len(t);
    if (n < 0)
        return -1;
    if (n >= p->flush_len || end > t->flush_at) {
        PyObject *r = PyObject_CallMethod((PyObject *)p, "_flush", "OL", (PyObject *)t, end);
        Py_XDECREF(r);
        return r ? 0 : -1;
    }
    return 0;
}

/* this thread's state as a ThreadState (new reference), made on first use */
static ThreadState *
thread_state(ModuleCall *p)
{
    PyObject *t = mc_state_ref(p, 1);
    if (t != NULL && !PyObject_TypeCheck(t, &ThreadStateType)) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_TypeError, "recorder thread state is not a _crecorder.ThreadState");
        return NULL;
    }
    return (ThreadState *)t;
}

/* the store key cached in `cache` under `k`, else what recorder.method(a1[, a2]) returns (a
   miss: the key is interned and cached by Python); -1 with an exception set on failure */
static long long
cached_key(PyObject *cache, PyObject *k, PyObject *recorder, PyObject *method, PyObject *a1,
           PyObject *a2)
{
    PyObject *obj = NULL;
    if (cache != NULL && PyDict_Check(cache)) {
        obj = PyDict_GetItemWithError(cache, k);
        Py_XINCREF(obj);
    }
    if (obj == NULL && !PyErr_Occurred())
        obj = PyObject_CallMethodObjArgs(recorder, method, a1, a2, NULL); /* a2 may end it */
    long long key = obj ? PyLong_AsLongLong(obj) : -1;
    Py_XDECREF(obj);
    return key;
}

/* raise the recorder's "nested too deep" error (recorder._region_too_deep); returns NULL */
static PyObject *
too_deep(PyObject *recorder, Py_ssize_t depth)
{
    PyObject *d = PyLong_FromSsize_t(depth);
    PyObject *r = d ? PyObject_CallMethodOneArg(recorder, str_region_too_deep, d) : NULL;
    Py_XDECREF(d);
    Py_XDECREF(r);
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "regions nested too deep");
    return NULL;
}

typedef struct {
    PyObject_HEAD
    PyObject *p;    /* the recorder (a ModuleCall) */
    PyObject *meta; /* dict or None */
    PyObject *t;    /* the ThreadState while it is open (set by __enter__, cleared at close) */
    PyObject *frame; /* the frame whose `with` opened it, or None (regions.is_abandoned) */
    long long key;
    long long start;
    Py_ssize_t depth;
} Region;

static int
region_traverse(Region *r, visitproc visit, void *arg)
{
    Py_VISIT(r->p);
    Py_VISIT(r->meta);
    Py_VISIT(r->t);
    Py_VISIT(r->frame);
    return 0;
}

static int
region_clear(Region *r)
{
    Py_CLEAR(r->p);
    Py_CLEAR(r->meta);
    Py_CLEAR(r->t);
    Py_CLEAR(r->frame);
    return 0;
}

static void
region_dealloc(Region *r)
{
    PyObject_GC_UnTrack(r);
    region_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *
region_enter(Region *self, PyObject *unused)
{
    ModuleCall *p = (ModuleCall *)self->p;
    ThreadState *t = thread_state(p);
    if (t == NULL)
        return NULL;
    Py_ssize_t depth = t->depth;
    if (depth >= p->max_depth) {
        Py_DECREF(t);
        return too_deep(self->p, depth);
    }
    long long start = now_ns(p); /* first: if it fails, the region was never opened */
    if ((start == -1 && PyErr_Occurred()) || t->open == NULL || !PyList_CheckExact(t->open) ||
        PyList_Append(t->open, (PyObject *)self) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "ThreadState.open must be a list");
        Py_DECREF(t);
        return NULL;
    }
    t->depth = depth + 1;
    Py_XSETREF(self->t, (PyObject *)t);
    self->depth = depth;
    self->start = start;
    return Py_NewRef((PyObject *)self);
}

static PyObject *
region_exit(Region *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (self->t == NULL || self->t == Py_None) /* not open: never entered, or closed already */
        Py_RETURN_FALSE;
    if (!PyObject_TypeCheck(self->t, &ThreadStateType)) {
        PyErr_SetString(PyExc_TypeError, "Region.t must be a _crecorder.ThreadState");
        return NULL;
    }
    ModuleCall *p = (ModuleCall *)self->p;
    ThreadState *t = (ThreadState *)Py_NewRef(self->t);
    PyObject *stack = t->open;
    if (stack == NULL || !PyList_CheckExact(stack)) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_TypeError, "ThreadState.open must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(stack);
    int unwound = nargs > 0 && args[0] != Py_None; /* an exception passes through this region */
    if (unwound && n && PyList_GET_ITEM(stack, n - 1) != (PyObject *)self &&
        self->depth < t->depth && close_abandoned_from(self->p, t, self->depth + 1) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    n = PyList_GET_SIZE(stack);
    int rc;
    if (n && PyList_GET_ITEM(stack, n - 1) == (PyObject *)self) {
        t->depth = self->depth; /* closed in one step: no Python code runs in between */
        Py_CLEAR(self->t);
        Py_CLEAR(self->frame);
        rc = PyList_SetSlice(stack, n - 1, n, NULL);
    }
    else {
        PyObject *r = PyObject_CallFunctionObjArgs(close_out_of_order, (PyObject *)self,
                                                   (PyObject *)t, NULL);
        rc = r ? 0 : -1;
        Py_XDECREF(r);
    }
    long long end = rc == 0 ? now_ns(p) : -1; /* after closing: a failing clock loses only it */
    if (rc == 0 && end == -1 && PyErr_Occurred())
        rc = -1;
    if (rc == 0)
        rc = emit_simple(p, t, self->start, end, self->key, self->depth, self->meta, 1);
    Py_DECREF(t);
    if (rc < 0)
        return NULL;
    Py_RETURN_FALSE;
}

static PyMethodDef region_methods[] = {
    {"__enter__", (PyCFunction)region_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))region_exit, METH_FASTCALL, NULL},
    {NULL}};

static PyMemberDef region_members[] = {
    {"depth", T_PYSSIZET, offsetof(Region, depth), 0, "nesting depth (moves up when an outer "
                                                       "region closes first)"},
    {"key", T_LONGLONG, offsetof(Region, key), READONLY, "store key"},
    {"meta", T_OBJECT, offsetof(Region, meta), READONLY, "metadata dict or None"},
    {"t", T_OBJECT, offsetof(Region, t), 0, "the thread state while open, else None"},
    {"frame", T_OBJECT, offsetof(Region, frame), 0,
     "the frame whose `with` opened it, or None (regions.is_abandoned)"},
    {"start", T_LONGLONG, offsetof(Region, start), READONLY, "start on the recorder's clock"},
    {NULL}};

static PyTypeObject RegionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.Region",
    .tp_basicsize = sizeof(Region),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One region (record_function, optimizer step, DataLoader fetch...): regions._Region "
              "in C.",
    .tp_traverse = (traverseproc)region_traverse,
    .tp_clear = (inquiry)region_clear,
    .tp_dealloc = (destructor)region_dealloc,
    .tp_methods = region_methods,
    .tp_members = region_members,
};

/* region(name, kind="user", **metadata): RegionHooks.region in C */
static PyObject *
mc_region(ModuleCall *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *name = nargs > 0 ? args[0] : NULL, *kind = nargs > 1 ? args[1] : NULL;
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError, "region() takes at most 2 positional arguments (%zd given)",
                     nargs);
        return NULL;
    }
    PyObject *meta = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i), *v = args[nargs + i];
        PyObject **slot = NULL;
        if (PyUnicode_Compare(k, str_kind) == 0)
            slot = &kind;
        else if (PyUnicode_Compare(k, str_name) == 0)
            slot = &name;
        if (slot != NULL) {
            if (*slot != NULL) {
                Py_XDECREF(meta);
                PyErr_Format(PyExc_TypeError, "region() got multiple values for argument '%U'", k);
                return NULL;
            }
            *slot = v;
            continue;
        }
        if (meta == NULL && (meta = PyDict_New()) == NULL)
            return NULL;
        if (PyDict_SetItem(meta, k, v) < 0) {
            Py_DECREF(meta);
            return NULL;
        }
    }
    if (name == NULL) {
        Py_XDECREF(meta);
        PyErr_SetString(PyExc_TypeError, "region() missing 1 required positional argument: 'name'");
        return NULL;
    }
    if (kind == NULL)
        kind = str_user;
    long long key;
    if (self->rk_keys != NULL && self->rk_keys == self->region_keys && kind == self->rk_kind &&
        name == self->rk_name) {
        key = self->rk_key;
    }
    else {
        PyObject *pair = PyTuple_Pack(2, kind, name);
        key = pair ? cached_key(self->region_keys, pair, (PyObject *)self, str_region_key, kind,
                                name)
                   : -1;
        Py_XDECREF(pair);
        if (key == -1 && PyErr_Occurred()) {
            Py_XDECREF(meta);
            return NULL;
        }
        if (self->region_keys != NULL) {
            Py_XSETREF(self->rk_keys, Py_NewRef(self->region_keys));
            Py_XSETREF(self->rk_kind, Py_NewRef(kind));
            Py_XSETREF(self->rk_name, Py_NewRef(name));
            self->rk_key = key;
        }
    }
    Region *r = PyObject_GC_New(Region, &RegionType);
    if (r == NULL) {
        Py_XDECREF(meta);
        return NULL;
    }
    r->p = Py_NewRef((PyObject *)self);
    r->meta = meta ? meta : Py_NewRef(Py_None);
    r->t = NULL;
    r->frame = NULL;
    r->key = key;
    r->start = 0;
    r->depth = 0;
    PyObject_GC_Track(r);
    return (PyObject *)r;
}

/* One backward pass on one thread and its open per-module group (regions._Backward in C) */
typedef struct {
    PyObject_HEAD
    PyObject *p;     /* the recorder */
    PyObject *t;     /* the ThreadState */
    PyObject *token; /* the open group's token, or None */
    long long packed;
    long long start;
    Py_ssize_t depth;
} Backward;

static int
bw_traverse(Backward *b, visitproc visit, void *arg)
{
    Py_VISIT(b->p);
    Py_VISIT(b->t);
    Py_VISIT(b->token);
    return 0;
}

static int
bw_clear(Backward *b)
{
    Py_CLEAR(b->p);
    Py_CLEAR(b->t);
    Py_CLEAR(b->token);
    return 0;
}

static void
bw_dealloc(Backward *b)
{
    PyObject_GC_UnTrack(b);
    bw_clear(b);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static int
bw_init(Backward *self, PyObject *args, PyObject *kwds)
{
    PyObject *p, *t;
    Py_ssize_t depth;
    if (!PyArg_ParseTuple(args, "O!O!n:Backward", &ModuleCallType, &p, &ThreadStateType, &t,
                          &depth))
        return -1;
    Py_XSETREF(self->p, Py_NewRef(p));
    Py_XSETREF(self->t, Py_NewRef(t));
    Py_XSETREF(self->token, Py_NewRef(Py_None));
    self->depth = depth;
    self->packed = self->start = 0;
    return 0;
}

/* close the open group (if any) at `now` */
static int
bw_close_group(Backward *self, long long now)
{
    if (self->token == NULL || self->token == Py_None)
        return 0;
    long long key = self->packed & KEY_MASK;
    return emit_simple((ModuleCall *)self->p, (ThreadState *)self->t, self->start, now, key,
                       self->depth, NULL, 0);
}

static int
bw_ready(Backward *self)
{
    if (self->p == NULL || self->t == NULL) {
        PyErr_SetString(PyExc_TypeError, "Backward(recorder, thread_state, depth) was not initialised");
        return 0;
    }
    return 1;
}

static PyObject *
bw_switch(Backward *self, PyObject *token)
{
    if (!bw_ready(self))
        return NULL;
    ModuleCall *p = (ModuleCall *)self->p;
    /* the new group's key and start first, then it replaces the old one in one step, then the
       old one is recorded: a failure (or an interrupt in Python code) loses at most that one */
    long long key = cached_key(p->bw_keys, token, (PyObject *)p, str_bw_key, token, NULL);
    if (key == -1 && PyErr_Occurred())
        return NULL;
    long long now = now_ns(p);
    if (now == -1 && PyErr_Occurred())
        return NULL;
    PyObject *old_token = self->token; /* our reference now */
    long long old_packed = self->packed, old_start = self->start;
    self->token = Py_NewRef(token);
    self->packed = (long long)((unsigned long long)key | ((unsigned long long)self->depth << KEY_BITS));
    self->start = now;
    int rc = 0;
    if (old_token != NULL && old_token != Py_None)
        rc = emit_simple(p, (ThreadState *)self->t, old_start, now,
                         old_packed & KEY_MASK, self->depth, NULL, 0);
    Py_XDECREF(old_token);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* enter(node): autograd `node` runs next; open its group (node.scope, else node.name) unless
   that group is the open one (regions._Backward.enter) */
static PyObject *
bw_enter(Backward *self, PyObject *node)
{
    PyObject *token = PyObject_GetAttr(node, str_scope);
    if (token == Py_None) {
        Py_DECREF(token);
        token = PyObject_GetAttr(node, str_name);
    }
    if (token == NULL)
        return NULL;
    PyObject *r = token == self->token ? Py_NewRef(Py_None) : bw_switch(self, token);
    Py_DECREF(token);
    return r;
}

static PyObject *
bw_close(Backward *self, PyObject *now_obj)
{
    if (!bw_ready(self))
        return NULL;
    long long now = PyLong_AsLongLong(now_obj);
    if (now == -1 && PyErr_Occurred())
        return NULL;
    int rc = bw_close_group(self, now);
    Py_XSETREF(self->token, Py_NewRef(Py_None)); /* closed either way: never recorded twice */
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef bw_methods[] = {
    {"switch", (PyCFunction)bw_switch, METH_O,
     "Close the open group (if any) and open one for token (a scope or an op name)."},
    {"enter", (PyCFunction)bw_enter, METH_O,
     "Autograd node runs next: open its group (node.scope, else node.name) unless it is open."},
    {"close", (PyCFunction)bw_close, METH_O, "Close the open group at `now`."},
    {NULL}};

static PyMemberDef bw_members[] = {
    {"token", T_OBJECT, offsetof(Backward, token), READONLY, "the open group's token or None"},
    {"depth", T_PYSSIZET, offsetof(Backward, depth), READONLY, "depth of the groups"},
    {NULL}};

static PyTypeObject BackwardType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.Backward",
    .tp_basicsize = sizeof(Backward),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Backward(recorder, thread_state, depth): the backward pass running on one thread "
              "(regions._Backward in C).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)bw_init,
    .tp_traverse = (traverseproc)bw_traverse,
    .tp_clear = (inquiry)bw_clear,
    .tp_dealloc = (destructor)bw_dealloc,
    .tp_methods = bw_methods,
    .tp_members = bw_members,
};

/* One backward pass of PyTorch's autograd (everyo.profiler.torch.backward._Pass in C): a
   parameterised module's group runs from the last boundary to the moment its first parameter's
   gradient is accumulated, which that parameter's hook marks. Hooks run between torch's kernels,
   with Python's caches cold: the Python pass and hook cost about 5 us more a module there
   (benchmarks/torch_parts.py), against 0.7 us for the mark in a loop. */
typedef struct {
    PyObject_HEAD
    PyObject *p;     /* the recorder */
    PyObject *t;     /* the ThreadState of the thread that started the pass */
    PyObject *token; /* the module that closed the last group, or None */
    long long at;    /* where the next group starts */
    Py_ssize_t depth;
} TorchPass;

static PyObject *str_current, *str_mark;

static int
tpass_traverse(TorchPass *b, visitproc visit, void *arg)
{
    Py_VISIT(b->p);
    Py_VISIT(b->t);
    Py_VISIT(b->token);
    return 0;
}

static int
tpass_clear(TorchPass *b)
{
    Py_CLEAR(b->p);
    Py_CLEAR(b->t);
    Py_CLEAR(b->token);
    return 0;
}

static void
tpass_dealloc(TorchPass *b)
{
    PyObject_GC_UnTrack(b);
    tpass_clear(b);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static int
tpass_init(TorchPass *self, PyObject *args, PyObject *kwds)
{
    PyObject *p, *t;
    if (!PyArg_ParseTuple(args, "O!O!:TorchPass", &ModuleCallType, &p, &ThreadStateType, &t))
        return -1;
    long long at = now_ns((ModuleCall *)p);
    if (at == -1 && PyErr_Occurred())
        return -1;
    Py_XSETREF(self->p, Py_NewRef(p));
    Py_XSETREF(self->t, Py_NewRef(t));
    Py_XSETREF(self->token, Py_NewRef(Py_None));
    self->depth = ((ThreadState *)t)->depth; /* (inside backward_call: under the pass's event) */
    self->at = at;
    return 0;
}

/* module `token`'s gradient is accumulated: its group ends now (a second parameter of the
   module that closed the last group changes nothing) */
static int
torch_pass_mark(TorchPass *self, PyObject *token)
{
    if (token == self->token)
        return 0;
    if (self->p == NULL || self->t == NULL) {
        PyErr_SetString(PyExc_TypeError, "TorchPass(recorder, thread_state) was not initialised");
        return -1;
    }
    ModuleCall *p = (ModuleCall *)self->p;
    long long now = now_ns(p);
    if (now == -1 && PyErr_Occurred())
        return -1;
    long long key = cached_key(p->bw_keys, token, (PyObject *)p, str_bw_key, token, NULL);
    if (key == -1 && PyErr_Occurred())
        return -1;
    long long start = self->at;
    self->at = now;
    Py_SETREF(self->token, Py_NewRef(token));
    return emit_simple(p, (ThreadState *)self->t, start, now, key, self->depth, NULL, 1);
}

static PyObject *
tpass_mark(TorchPass *self, PyObject *token)
{
    if (torch_pass_mark(self, token) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef tpass_methods[] = {
    {"mark", (PyCFunction)tpass_mark, METH_O, "Module token's gradient is accumulated: its group ends now."},
    {NULL}};

static PyMemberDef tpass_members[] = {
    {"token", T_OBJECT, offsetof(TorchPass, token), READONLY, "the module that closed the last group"},
    {"depth", T_PYSSIZET, offsetof(TorchPass, depth), READONLY, "depth of the groups"},
    {"at", T_LONGLONG, offsetof(TorchPass, at), READONLY, "where the next group starts (ns)"},
    {NULL}};

static PyTypeObject TorchPassType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.TorchPass",
    .tp_basicsize = sizeof(TorchPass),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "TorchPass(recorder, thread_state): one backward pass of torch's autograd, its "
              "groups per parameterised module (everyo.profiler.torch.backward._Pass in C).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)tpass_init,
    .tp_traverse = (traverseproc)tpass_traverse,
    .tp_clear = (inquiry)tpass_clear,
    .tp_dealloc = (destructor)tpass_dealloc,
    .tp_methods = tpass_methods,
    .tp_members = tpass_members,
};

/* A parameter's post-accumulate-grad hook: marks `token` on `passes.current`, the pass the
   adapter is running (None: none), a TorchPass without a Python frame, else its mark method */
typedef struct {
    PyObject_HEAD
    PyObject *passes;
    PyObject *token;
} TorchHook;

static int
th_traverse(TorchHook *h, visitproc visit, void *arg)
{
    Py_VISIT(h->passes);
    Py_VISIT(h->token);
    return 0;
}

static int
th_clear(TorchHook *h)
{
    Py_CLEAR(h->passes);
    Py_CLEAR(h->token);
    return 0;
}

static void
th_dealloc(TorchHook *h)
{
    PyObject_GC_UnTrack(h);
    th_clear(h);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

static int
th_init(TorchHook *self, PyObject *args, PyObject *kwds)
{
    PyObject *passes, *token;
    if (!PyArg_ParseTuple(args, "OO:TorchHook", &passes, &token))
        return -1;
    Py_XSETREF(self->passes, Py_NewRef(passes));
    Py_XSETREF(self->token, Py_NewRef(token));
    return 0;
}

static PyObject *
th_call(TorchHook *self, PyObject *args, PyObject *kwds)
{
    if (self->passes == NULL) {
        PyErr_SetString(PyExc_TypeError, "TorchHook(passes, token) was not initialised");
        return NULL;
    }
    PyObject *cur = PyObject_GetAttr(self->passes, str_current);
    if (cur == NULL)
        return NULL;
    int rc = 0;
    if (Py_IS_TYPE(cur, &TorchPassType))
        rc = torch_pass_mark((TorchPass *)cur, self->token);
    else if (cur != Py_None) {
        PyObject *r = PyObject_CallMethodOneArg(cur, str_mark, self->token);
        rc = r ? 0 : -1;
        Py_XDECREF(r);
    }
    Py_DECREF(cur);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMemberDef th_members[] = {
    {"token", T_OBJECT, offsetof(TorchHook, token), READONLY, "the module it marks"},
    {NULL}};

static PyTypeObject TorchHookType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.TorchHook",
    .tp_basicsize = sizeof(TorchHook),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "TorchHook(passes, token): a parameter's hook; passes.current.mark(token) when a "
              "pass runs.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)th_init,
    .tp_call = (ternaryfunc)th_call,
    .tp_traverse = (traverseproc)th_traverse,
    .tp_clear = (inquiry)th_clear,
    .tp_dealloc = (destructor)th_dealloc,
    .tp_members = th_members,
};

/* backward_call(run, *args): run(*args) as one `backward` event, groups per module inside it
   (RegionHooks.backward_call in C) */
static PyObject *
mc_backward_call(ModuleCall *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "backward_call(run, *args) needs run");
        return NULL;
    }
    PyObject *run = args[0];
    ThreadState *t = thread_state(self);
    if (t == NULL)
        return NULL;
    PyObject *pair = self->backward_region; /* (kind, name), checked by configure */
    if (pair == NULL) {
        Py_DECREF(t);
        PyErr_SetString(PyExc_RuntimeError, "configure(backward_region=...) was not called");
        return NULL;
    }
    long long key = cached_key(self->region_keys, pair, (PyObject *)self, str_region_key,
                               PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
    if (key == -1 && PyErr_Occurred()) {
        Py_DECREF(t);
        return NULL;
    }
    Py_ssize_t depth = t->depth;
    if (depth >= self->max_depth) {
        Py_DECREF(t);
        return too_deep((PyObject *)self, depth);
    }
    /* Backward(self, t, depth + 1), built in place (no argument parsing on every pass) */
    Backward *b = (Backward *)BackwardType.tp_alloc(&BackwardType, 0);
    if (b == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    b->p = Py_NewRef((PyObject *)self);
    b->t = Py_NewRef((PyObject *)t);
    b->token = Py_NewRef(Py_None);
    b->depth = depth + 1;
    b->packed = b->start = 0;
    PyObject *bw = (PyObject *)b;
    long long start = now_ns(self);
    if (start == -1 && PyErr_Occurred()) { /* nothing ran: nothing to restore or record */
        Py_DECREF(bw);
        Py_DECREF(t);
        return NULL;
    }
    t->depth = depth + 1;
    PyObject *saved = t->backward; /* our reference now */
    t->backward = Py_NewRef(bw);   /* and we keep ours: Python code may replace t.backward */
    PyObject *out = PyObject_Vectorcall(run, args + 1, (size_t)(nargs - 1), NULL);
    /* finally: close the last group, restore the thread, emit the pass */
    PyObject *exc = out ? NULL : PyErr_GetRaisedException();
    /* restore the thread first: Python code below may be interrupted (losing events only) */
    Py_XSETREF(t->backward, saved ? saved : Py_NewRef(Py_None));
    t->depth = depth;
    int rc = close_abandoned_from((PyObject *)self, t, depth + 1);
    long long end = rc == 0 ? now_ns(self) : -1;
    if (rc == 0 && end == -1 && PyErr_Occurred())
        rc = -1;
    if (rc == 0)
        rc = bw_close_group((Backward *)bw, end);
    if (rc == 0)
        rc = emit_simple(self, t, start, end, key, depth, NULL, 1);
    else { /* kept anyway when its groups were: until the open group's start if need be */
        long long last = ((Backward *)bw)->start;
        keep_if_parent(self, t, start, end != -1 ? end : (last > start ? last : start), key, depth);
    }
    Py_XSETREF(((Backward *)bw)->token, Py_NewRef(Py_None)); /* closed, as close() leaves it */
    Py_DECREF(bw);
    Py_DECREF(t);
    if (rc < 0) { /* the recorder's own error wins, as an exception in `finally` would */
        Py_XDECREF(exc);
        Py_XDECREF(out);
        return NULL;
    }
    if (exc != NULL) {
        PyErr_SetRaisedException(exc);
        return NULL;
    }
    return out;
}

/* backward_groups(): switch(token) of the pass running on this thread, or None */
static PyObject *
mc_backward_groups(ModuleCall *self, PyObject *unused)
{
    ThreadState *t = self->tss ? (ThreadState *)PyThread_tss_get(self->tss) : NULL;
    if (t == NULL || t->backward == NULL || t->backward == Py_None)
        Py_RETURN_NONE;
    return PyObject_GetAttr(t->backward, str_enter);
}

static PyObject *
bind_regions(PyObject *module, PyObject *args)
{
    PyObject *out_of_order, *abandoned, *decide = NULL;
    if (!PyArg_ParseTuple(args, "OO|O:bind_regions", &out_of_order, &abandoned, &decide))
        return NULL;
    Py_XSETREF(close_out_of_order, Py_NewRef(out_of_order));
    Py_XSETREF(close_abandoned, Py_NewRef(abandoned));
    if (decide != NULL)
        Py_XSETREF(program_error, Py_NewRef(decide));
    Py_RETURN_NONE;
}

/* regions.close_abandoned(recorder, t, depth) when the innermost open region of t is at `depth`
   or deeper: regions an exception unwound without their exit (an interrupt where it could not
   run). 0, or -1 with an exception set */
static int
close_abandoned_from(PyObject *recorder, ThreadState *t, Py_ssize_t depth)
{
    PyObject *stack = t->open;
    if (stack == NULL || !PyList_CheckExact(stack) || PyList_GET_SIZE(stack) == 0)
        return 0;
    PyObject *top = PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1);
    if (Py_IS_TYPE(top, &RegionType) && ((Region *)top)->depth < depth)
        return 0;
    if (close_abandoned == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_crecorder.bind_regions was not called");
        return -1;
    }
    PyObject *r = PyObject_CallFunction(close_abandoned, "OOn", recorder, (PyObject *)t, depth);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyMethodDef mc_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))mc_configure, METH_VARARGS | METH_KEYWORDS,
     "configure(**options): set what the compiled recorder reads (contract.OPTIONS), each "
     "value checked before any is applied."},
    {"drop_module_cache", (PyCFunction)mc_drop_module_cache, METH_NOARGS,
     "A keymapped module died: cached module look-ups start over."},
    {"_state", (PyCFunction)mc_state, METH_NOARGS, "This thread's record, made on first use."},
    {"_peek_state", (PyCFunction)mc_peek_state, METH_NOARGS,
     "This thread's record, or None before its first event."},
    {"_remember_state", (PyCFunction)mc_remember_state, METH_O,
     "Remember t as this thread's record (the recorder's _threads keeps it alive)."},
    {"_init_thread_storage", (PyCFunction)mc_init_thread_storage, METH_NOARGS, "(no-op)"},
    {"_release_thread_storage", (PyCFunction)mc_release_thread_storage, METH_NOARGS,
     "Give the thread-specific key back (at stop)."},
    {"scope", (PyCFunction)mc_scope, METH_NOARGS,
     "The token autograd nodes store: (class name, path) of the innermost module, or None."},
    {"backward_call", (PyCFunction)(void (*)(void))mc_backward_call, METH_FASTCALL,
     "backward_call(run, *args): run(*args), a whole backward pass, as one `backward` event "
     "with per-module children (hook protocol)."},
    {"backward_groups", (PyCFunction)mc_backward_groups, METH_NOARGS,
     "enter(node) of the backward pass running on this thread, or None (hook protocol)."},
    {"region", (PyCFunction)(void (*)(void))mc_region, METH_FASTCALL | METH_KEYWORDS,
     "region(name, kind='user', **metadata): a context manager recording one region (hook "
     "protocol)."},
    {"module_call", (PyCFunction)(void (*)(void))mc_module_call, METH_FASTCALL,
     "module_call(module, forward, args, kwargs): run forward(*args, **kwargs) as one module "
     "event (hook protocol)."},
    {NULL}};

static PyMemberDef mc_members[] = {
    {"_region_keys", T_OBJECT, offsetof(ModuleCall, region_keys), READONLY,
     "(kind, name) -> key"},
    {"_bw_keys", T_OBJECT, offsetof(ModuleCall, bw_keys), READONLY, "backward token -> key"},
    {"_roots", T_OBJECT, offsetof(ModuleCall, roots), READONLY, "id(outermost module) -> keymap"},
    {"_backward_region", T_OBJECT, offsetof(ModuleCall, backward_region), READONLY,
     "(kind, name) of a backward pass's event"},
    {"_python_roots", T_BOOL, offsetof(ModuleCall, python_roots), READONLY,
     "every outermost module call goes through _root_call"},
    {"_max_depth", T_PYSSIZET, offsetof(ModuleCall, max_depth), READONLY,
     "deepest nesting on one thread"},
    {"_fast", T_BOOL, offsetof(ModuleCall, fast), READONLY,
     "regions and backward groups append straight to the buffer"},
    {"_general", T_INT, offsetof(ModuleCall, general), READONLY,
     "1: module_call is the general Python path (the module-call API then calls it by name)"},
    {"_flush_len", T_PYSSIZET, offsetof(ModuleCall, flush_len), READONLY,
     "flush at this buffer size"},
    {"_mode", T_INT, offsetof(ModuleCall, mode), READONLY,
     "0: every module event through _emit_call, 1: plain, 2: shapes"},
    {NULL}};

/* (read-only, like the members: configure() sets them) */
static PyGetSetDef mc_getset[] = {
    {"_clock", (getter)mc_get_clock, NULL, "the recorder's clock (ns)", NULL},
    {"_tensor", (getter)mc_get_tensor, NULL, "the engine's tensor class, or None", NULL},
    {NULL}};

static PyTypeObject ModuleCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.recording._crecorder.ModuleCall",
    .tp_basicsize = sizeof(ModuleCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The compiled module-call path (base class of recorder.Recorder).",
    .tp_new = mc_new,
    .tp_traverse = (traverseproc)mc_traverse,
    .tp_clear = (inquiry)mc_clear,
    .tp_dealloc = (destructor)mc_dealloc,
    .tp_methods = mc_methods,
    .tp_members = mc_members,
    .tp_getset = mc_getset,
};

/* ------------------------------------------------------------------------------------------ */
/* The module-call contract (module_call_api.h): what the engine's Module.__call__ enters      */
/* ------------------------------------------------------------------------------------------ */

/* p.module_call(module, forward, args, kwargs) for a compiled recorder: its primitives, or, on
   the general path (CUDA, memory, ops: `general`), the Python method it installed */
static PyObject *
api_record(PyObject *recorder, PyObject *module, PyObject *forward, PyObject *args,
           PyObject *kwargs)
{
    if (!((ModuleCall *)recorder)->general)
        return mc_record((ModuleCall *)recorder, module, forward, args, kwargs);
    PyObject *f = forward_of(module, forward);
    PyObject *kw = f ? kwargs_for_python(kwargs) : NULL;
    PyObject *r = kw ? PyObject_CallMethodObjArgs(recorder, str_module_call, module, f, args, kw,
                                                  NULL)
                     : NULL;
    Py_XDECREF(f);
    Py_XDECREF(kw);
    return r;
}

static EveryoModuleCallAPI module_call_api = {
    .version = EVERYO_MODULE_CALL_API_VERSION,
    .recorder_type = &ModuleCallType,
    .record = api_record,
};

static PyMethodDef module_methods[] = {
    {"bind_regions", (PyCFunction)bind_regions, METH_VARARGS,
     "bind_regions(close_out_of_order, close_abandoned, raised_by_signal_handler=None): "
     "regions' functions for regions closed out of order and regions left without their exit, "
     "and the question whether a shape read's exception is the program's."},
    {NULL}};

/* use NumPy arrays' dims in place only if the leading fields are where NdPrefix says */
static void
check_ndarray_layout(void)
{
    PyObject *np = PyImport_ImportModule("numpy");
    PyObject *t = np ? PyObject_GetAttrString(np, "ndarray") : NULL;
    PyObject *arr = t ? PyObject_CallMethod(np, "empty", "((iii))", 2, 3, 5) : NULL;
    if (arr != NULL && PyType_Check(t) && Py_IS_TYPE(arr, (PyTypeObject *)t)) {
        NdPrefix *a = (NdPrefix *)arr;
        PyObject *dtype = PyObject_GetAttrString(arr, "dtype");
        if (dtype == NULL)
            PyErr_Clear(); /* (the layout is then not trusted: the by-name path) */
        if (a->nd == 3 && a->dimensions[0] == 2 && a->dimensions[1] == 3 &&
            a->dimensions[2] == 5 && dtype != NULL && a->descr == dtype)
            ndarray_t = (PyTypeObject *)Py_NewRef(t);
        Py_XDECREF(dtype);
    }
    Py_XDECREF(arr);
    Py_XDECREF(t);
    Py_XDECREF(np);
    PyErr_Clear(); /* without the check the shape cache compares tuples, as before */
}

/* ------------------------------------------------------------------------------------------ */

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "everyo.profiler.recording._crecorder",
    .m_doc = "The compiled module-call path of everyo's profiler (see recorder.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

#define INTERN(var, text)                                                                        \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                      \
        return NULL;

PyMODINIT_FUNC
PyInit__crecorder(void)
{
    INTERN(str_new_state, "_new_state");
    INTERN(str_root_call, "_root_call");
    INTERN(str_unlisted, "_unlisted");
    INTERN(str_shape_id, "_shape_id");
    INTERN(str_data, "data");
    INTERN(str_dtype, "dtype");
    INTERN(str_shape, "shape");
    INTERN(str_keys, "keys");
    INTERN(str_emit_call, "_emit_call");
    INTERN(str_forward, "forward");
    for (int i = 0; i < N_OPTIONS; i++)
        INTERN(option_keys[i], option_names[i]);
    INTERN(str_module_call, "module_call");
    INTERN(str_region_key, "_region_key");
    INTERN(str_region_too_deep, "_region_too_deep");
    INTERN(str_bw_key, "_bw_key");
    INTERN(str_enter, "enter");
    INTERN(str_scope, "scope");
    INTERN(str_kind, "kind");
    INTERN(str_name, "name");
    INTERN(str_user, "user");
    INTERN(str_current, "current");
    INTERN(str_mark, "mark");
    check_ndarray_layout();
    PyObject *time = PyImport_ImportModule("time");
    if (time == NULL)
        return NULL;
    perf_counter_ns = PyObject_GetAttrString(time, "perf_counter_ns");
    Py_DECREF(time);
    if (perf_counter_ns == NULL)
        return NULL;
    if (PyType_Ready(&EventBufferType) < 0 || PyType_Ready(&ThreadStateType) < 0 ||
        PyType_Ready(&ModuleCallType) < 0 ||
        PyType_Ready(&RegionType) < 0 || PyType_Ready(&BackwardType) < 0 ||
        PyType_Ready(&TorchPassType) < 0 || PyType_Ready(&TorchHookType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    PyObject *api = PyCapsule_New(&module_call_api, EVERYO_MODULE_CALL_API_NAME, NULL);
    if (api == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "EventBuffer", (PyObject *)&EventBufferType) < 0 ||
        PyModule_AddObjectRef(m, "module_call_api", api) < 0 ||
        PyModule_AddObjectRef(m, "Region", (PyObject *)&RegionType) < 0 ||
        PyModule_AddObjectRef(m, "Backward", (PyObject *)&BackwardType) < 0 ||
        PyModule_AddObjectRef(m, "TorchPass", (PyObject *)&TorchPassType) < 0 ||
        PyModule_AddObjectRef(m, "TorchHook", (PyObject *)&TorchHookType) < 0 ||
        PyModule_AddObjectRef(m, "ThreadState", (PyObject *)&ThreadStateType) < 0 ||
        PyModule_AddObjectRef(m, "ModuleCall", (PyObject *)&ModuleCallType) < 0) {
        Py_DECREF(api);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(api); /* the module holds it */
    return m;
}
