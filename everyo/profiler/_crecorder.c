/*
 * everyo.profiler._crecorder: the compiled module-call path of the profiler's recorder.
 *
 * It does exactly what everyo/profiler/recorder.py's _PyModuleCall.module_call does (that
 * Python code is the specification, and the fallback where this extension was not built):
 * time one module call, keep the thread's nesting depth and module scope, and append
 * (start, end, packed key|depth|shape) to the thread's buffer. Everything that is not the
 * common case (the outermost module, a module missing from the path map, a new shape, warmup
 * or a schedule, a failing forward, a flush) calls back into the Python recorder.
 *
 * ThreadState is the per-thread record the Python recorder and regions use (same fields as
 * recorder._PyThreadState).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <time.h>

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

#define KEY_BITS 24
#define SHAPE_SHIFT 40
#define MODE_PLAIN 1
#define MODE_SHAPES 2

static PyObject *str_new_state, *str_root_call, *str_unlisted, *str_shape_id, *str_data,
    *str_shape, *str_record_shapes;
static PyObject *perf_counter_ns; /* time.perf_counter_ns: read as clock_gettime below */

/* ------------------------------------------------------------------------------------------ */
/* ThreadState                                                                                */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *buf;
    PyObject *meta;
    PyObject *scope;
    PyObject *keymap;
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

static int
ts_init(ThreadState *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"index", "flush_at", NULL};
    Py_ssize_t index;
    long long flush_at;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nL", kwlist, &index, &flush_at))
        return -1;
    Py_XSETREF(self->buf, PyList_New(0));
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
    {"buf", T_OBJECT, offsetof(ThreadState, buf), 0, "finished events, flat"},
    {"meta", T_OBJECT, offsetof(ThreadState, meta), 0, "(event index in buf, metadata)"},
    {"scope", T_OBJECT, offsetof(ThreadState, scope), 0, "(class, path) of the innermost module"},
    {"keymap", T_OBJECT, offsetof(ThreadState, keymap), 0, "id(module) -> entry, or None"},
    {"root", T_OBJECT, offsetof(ThreadState, root), 0, "the outermost module running"},
    {"backward", T_OBJECT, offsetof(ThreadState, backward), 0, "the backward pass running"},
    {"blocks", T_OBJECT, offsetof(ThreadState, blocks), 0, "(event index, store row, count)"},
    {"open", T_OBJECT, offsetof(ThreadState, open), 0, "open regions, innermost last"},
    {"depth", T_PYSSIZET, offsetof(ThreadState, depth), 0, "open events on this thread"},
    {"index", T_PYSSIZET, offsetof(ThreadState, index), 0, "row in the store's thread table"},
    {"keep_below", T_PYSSIZET, offsetof(ThreadState, keep_below), 0, "keep shallower events"},
    {"flushed", T_PYSSIZET, offsetof(ThreadState, flushed), 0, "events already in the store"},
    {"flush_at", T_LONGLONG, offsetof(ThreadState, flush_at), 0, "flush after this clock time"},
    {NULL}};

static PyTypeObject ThreadStateType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler._crecorder.ThreadState",
    .tp_basicsize = sizeof(ThreadState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One thread's recording state (see recorder._PyThreadState).",
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
    int mode;
    int clock_is_default;
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
    return 0;
}

static int
mc_clear(ModuleCall *self)
{
    Py_CLEAR(self->clock);
    Py_CLEAR(self->tensor);
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

static int
mc_set_clock(ModuleCall *self, PyObject *value, void *closure)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete _clock");
        return -1;
    }
    Py_XSETREF(self->clock, Py_NewRef(value));
#ifdef __linux__
    self->clock_is_default = (value == perf_counter_ns);
#else
    self->clock_is_default = 0;
#endif
    return 0;
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
    PyObject *r = PyObject_CallNoArgs(self->clock);
    if (r == NULL)
        return -1;
    long long v = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred())
        return -1;
    return v;
}

/* append three ints to the thread's buffer (created first, so the record is never split) */
static int
append3(ThreadState *t, long long a, long long b, PyObject *packed)
{
    PyObject *pa = PyLong_FromLongLong(a);
    PyObject *pb = PyLong_FromLongLong(b);
    if (pa == NULL || pb == NULL) {
        Py_XDECREF(pa);
        Py_XDECREF(pb);
        return -1;
    }
    PyObject *buf = t->buf;
    if (buf == NULL || !PyList_CheckExact(buf)) {
        Py_DECREF(pa);
        Py_DECREF(pb);
        PyErr_SetString(PyExc_TypeError, "ThreadState.buf must be a list");
        return -1;
    }
    int rc = PyList_Append(buf, pa);
    if (rc == 0)
        rc = PyList_Append(buf, pb);
    if (rc == 0)
        rc = PyList_Append(buf, packed);
    Py_DECREF(pa);
    Py_DECREF(pb);
    return rc;
}

static PyObject *
getattr_default(PyObject *obj, PyObject *name, PyObject *dflt)
{
    PyObject *r;
    if (PyObject_GetOptionalAttr(obj, name, &r) < 0)
        return NULL;
    return r ? r : Py_NewRef(dflt);
}

static PyObject *
tensor_shape(PyObject *x)
{
    PyObject *data = PyObject_GetAttr(x, str_data);
    if (data == NULL)
        return NULL;
    PyObject *shape = PyObject_GetAttr(data, str_shape);
    Py_DECREF(data);
    return shape;
}

/* pack(key, depth, shape_id) of everyo.profiler.packing */
static PyObject *
packed_with_shape(long long key, Py_ssize_t depth, PyObject *sid_obj)
{
    long long sid = PyLong_AsLongLong(sid_obj);
    if (sid == -1 && PyErr_Occurred())
        return NULL;
    unsigned long long v = (unsigned long long)key | ((unsigned long long)depth << KEY_BITS) |
                           ((unsigned long long)(sid + 1) << SHAPE_SHIFT);
    return PyLong_FromUnsignedLongLong(v);
}

static PyObject *
mc_module_call(ModuleCall *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 4) {
        PyErr_SetString(PyExc_TypeError, "module_call(module, forward, args, kwargs)");
        return NULL;
    }
    PyObject *module = argv[0], *forward = argv[1], *args = argv[2], *kwargs = argv[3];
    PyObject *kwargs_in = kwargs; /* passed back to the Python recorder as given */
    if (!PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "module_call: args must be a tuple");
        return NULL;
    }
    if (kwargs == Py_None)
        kwargs = NULL;
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
        PyObject *r = PyObject_CallMethodObjArgs(self_obj, str_root_call, t_obj, module, forward,
                                                 args, kwargs_in, NULL);
        Py_DECREF(t_obj);
        return r;
    }

    /* entry = keymap.get(id(module)) or self._unlisted(t, module) */
    PyObject *mid = PyLong_FromVoidPtr(module);
    if (mid == NULL) {
        Py_DECREF(t_obj);
        return NULL;
    }
    PyObject *entry = PyDict_Check(t->keymap) ? PyDict_GetItemWithError(t->keymap, mid) : NULL;
    Py_DECREF(mid);
    if (entry != NULL) {
        Py_INCREF(entry);
    }
    else {
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
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3) {
        PyErr_SetString(PyExc_TypeError, "recorder keymap entry must be (key, scope, [last])");
        goto fail_entry;
    }
    PyObject *key_obj = PyTuple_GET_ITEM(entry, 0);
    long long key = PyLong_AsLongLong(key_obj);
    if (key == -1 && PyErr_Occurred())
        goto fail_entry;

    Py_ssize_t depth = t->depth;
    t->depth = depth + 1;
    PyObject *prev = t->scope ? t->scope : Py_NewRef(Py_None); /* our reference now */
    t->scope = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    int one = nargs == 1 && (kwargs == NULL || (PyDict_Check(kwargs) && PyDict_GET_SIZE(kwargs) == 0));

    long long start = now_ns(self);
    PyObject *out = NULL;
    if (!(start == -1 && PyErr_Occurred())) {
        if (one)
            out = PyObject_CallOneArg(forward, PyTuple_GET_ITEM(args, 0));
        else
            out = PyObject_Call(forward, args, kwargs);
    }
    if (out == NULL) { /* self._failed(t, key, depth, start, prev); raise */
        PyObject *exc = PyErr_GetRaisedException();
        PyObject *r = PyObject_CallMethod(self_obj, "_failed", "OOnLO", t_obj, key_obj, depth,
                                          start, prev);
        if (r == NULL) {
            Py_XDECREF(exc); /* the recorder's own error wins, as `raise` in Python would */
        }
        else {
            Py_DECREF(r);
            PyErr_SetRaisedException(exc);
        }
        Py_DECREF(prev);
        goto fail_entry;
    }
    long long end = now_ns(self);
    if (end == -1 && PyErr_Occurred()) {
        Py_DECREF(prev);
        goto fail_out;
    }
    t->depth = depth;
    Py_XSETREF(t->scope, prev); /* prev's reference goes back to the thread state */

    int mode = self->mode;
    PyObject *packed = NULL;
    if (mode == MODE_SHAPES) {
        if (one) {
            PyObject *a = PyTuple_GET_ITEM(args, 0);
            PyObject *T = self->tensor;
            PyObject *ashape, *oshape;
            if (T != NULL && (PyObject *)Py_TYPE(a) == T && (PyObject *)Py_TYPE(out) == T) {
                ashape = tensor_shape(a);
                oshape = ashape ? tensor_shape(out) : NULL;
            }
            else {
                ashape = getattr_default(a, str_shape, Py_None);
                oshape = ashape ? getattr_default(out, str_shape, Py_False) : NULL;
            }
            if (oshape == NULL) {
                Py_XDECREF(ashape);
                goto fail_out;
            }
            PyObject *slot = PyTuple_GET_ITEM(entry, 2); /* [((a, o, depth), packed)] */
            PyObject *last = NULL, *lastcur = NULL;
            if (PyList_Check(slot) && PyList_GET_SIZE(slot) == 1) {
                last = PyList_GET_ITEM(slot, 0);
                if (PyTuple_Check(last) && PyTuple_GET_SIZE(last) == 2) {
                    lastcur = PyTuple_GET_ITEM(last, 0);
                    if (!PyTuple_Check(lastcur) || PyTuple_GET_SIZE(lastcur) != 3)
                        lastcur = NULL;
                }
            }
            int same = 0;
            if (lastcur != NULL) {
                Py_INCREF(last); /* a comparison may run Python code that replaces the slot */
                PyObject *d = PyTuple_GET_ITEM(lastcur, 2);
                same = PyLong_CheckExact(d) && PyLong_AsSsize_t(d) == depth;
                if (same == 1)
                    same = PyObject_RichCompareBool(PyTuple_GET_ITEM(lastcur, 0), ashape, Py_EQ);
                if (same == 1)
                    same = PyObject_RichCompareBool(PyTuple_GET_ITEM(lastcur, 1), oshape, Py_EQ);
                if (same == 1)
                    packed = Py_NewRef(PyTuple_GET_ITEM(last, 1));
                Py_DECREF(last);
                if (same < 0) {
                    Py_DECREF(ashape);
                    Py_DECREF(oshape);
                    goto fail_out;
                }
            }
            if (!same) {
                PyObject *cur = PyTuple_New(3);
                PyObject *dobj = PyLong_FromSsize_t(depth);
                if (cur == NULL || dobj == NULL) {
                    Py_XDECREF(cur);
                    Py_XDECREF(dobj);
                    Py_DECREF(ashape);
                    Py_DECREF(oshape);
                    goto fail_out;
                }
                PyTuple_SET_ITEM(cur, 0, ashape); /* steals */
                PyTuple_SET_ITEM(cur, 1, oshape);
                PyTuple_SET_ITEM(cur, 2, dobj);
                ashape = oshape = NULL;
                PyObject *sid = PyObject_CallMethodObjArgs(self_obj, str_shape_id, args,
                                                           kwargs_in, out, NULL);
                packed = sid ? packed_with_shape(key, depth, sid) : NULL;
                Py_XDECREF(sid);
                if (packed == NULL) {
                    Py_DECREF(cur);
                    goto fail_out;
                }
                PyObject *pair = PyTuple_Pack(2, cur, packed);
                Py_DECREF(cur);
                if (pair == NULL)
                    goto fail_packed;
                if (PyList_Check(slot) && PyList_GET_SIZE(slot) == 1) {
                    if (PyList_SetItem(slot, 0, pair) < 0) /* steals pair, drops the old one */
                        goto fail_packed;
                }
                else {
                    Py_DECREF(pair);
                }
            }
            else {
                Py_DECREF(ashape);
                Py_DECREF(oshape);
            }
        }
        else {
            PyObject *sid = PyObject_CallMethodObjArgs(self_obj, str_shape_id, args,
                                                       kwargs_in, out, NULL);
            packed = sid ? packed_with_shape(key, depth, sid) : NULL;
            Py_XDECREF(sid);
            if (packed == NULL)
                goto fail_out;
        }
    }
    else if (mode) {
        packed = PyLong_FromUnsignedLongLong((unsigned long long)key |
                                             ((unsigned long long)depth << KEY_BITS));
        if (packed == NULL)
            goto fail_out;
    }
    else { /* warmup, schedule or stopped: the general path decides */
        PyObject *rs = PyObject_GetAttr(self_obj, str_record_shapes);
        if (rs == NULL)
            goto fail_out;
        int shapes = PyObject_IsTrue(rs);
        Py_DECREF(rs);
        if (shapes < 0)
            goto fail_out;
        PyObject *tail;
        if (shapes) {
            PyObject *sid = PyObject_CallMethodObjArgs(self_obj, str_shape_id, args,
                                                       kwargs_in, out, NULL);
            if (sid == NULL)
                goto fail_out;
            tail = PyTuple_Pack(1, sid);
            Py_DECREF(sid);
        }
        else {
            tail = PyTuple_New(0);
        }
        if (tail == NULL)
            goto fail_out;
        PyObject *core = Py_BuildValue("(LLOn)", start, end - start, key_obj, depth);
        PyObject *r = core ? PyObject_CallMethod(self_obj, "_emit", "OOOOL", t_obj, core, tail,
                                                 Py_None, end)
                           : NULL;
        Py_XDECREF(core);
        Py_DECREF(tail);
        if (r == NULL)
            goto fail_out;
        Py_DECREF(r);
        Py_DECREF(entry);
        Py_DECREF(t_obj);
        return out;
    }

    if (append3(t, start, end, packed) < 0)
        goto fail_packed;
    Py_DECREF(packed);
    if (PyList_GET_SIZE(t->buf) >= self->flush_len || end > t->flush_at) {
        PyObject *r = PyObject_CallMethod(self_obj, "_flush", "OL", t_obj, end);
        if (r == NULL)
            goto fail_out;
        Py_DECREF(r);
    }
    Py_DECREF(entry);
    Py_DECREF(t_obj);
    return out;

fail_packed:
    Py_XDECREF(packed);
fail_out:
    Py_DECREF(out);
fail_entry:
    Py_DECREF(entry);
    Py_DECREF(t_obj);
    return NULL;
}

static PyMethodDef mc_methods[] = {
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
    {"module_call", (PyCFunction)(void (*)(void))mc_module_call, METH_FASTCALL,
     "module_call(module, forward, args, kwargs): run forward(*args, **kwargs) as one module "
     "event (hook protocol)."},
    {NULL}};

static PyMemberDef mc_members[] = {
    {"_tensor", T_OBJECT, offsetof(ModuleCall, tensor), 0, "everyo's Tensor class"},
    {"_flush_len", T_PYSSIZET, offsetof(ModuleCall, flush_len), 0, "flush at this buffer size"},
    {"_mode", T_INT, offsetof(ModuleCall, mode), 0, "0: general path, 1: plain, 2: shapes"},
    {NULL}};

static PyGetSetDef mc_getset[] = {
    {"_clock", (getter)mc_get_clock, (setter)mc_set_clock, "the recorder's clock (ns)", NULL},
    {NULL}};

static PyTypeObject ModuleCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler._crecorder.ModuleCall",
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

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "everyo.profiler._crecorder",
    .m_doc = "The compiled module-call path of everyo's profiler (see recorder.py).",
    .m_size = -1,
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
    INTERN(str_shape, "shape");
    INTERN(str_record_shapes, "record_shapes");
    PyObject *time = PyImport_ImportModule("time");
    if (time == NULL)
        return NULL;
    perf_counter_ns = PyObject_GetAttrString(time, "perf_counter_ns");
    Py_DECREF(time);
    if (perf_counter_ns == NULL)
        return NULL;
    if (PyType_Ready(&ThreadStateType) < 0 || PyType_Ready(&ModuleCallType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "ThreadState", (PyObject *)&ThreadStateType) < 0 ||
        PyModule_AddObjectRef(m, "ModuleCall", (PyObject *)&ModuleCallType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
