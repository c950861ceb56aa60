/*
 * everyo.nn._cmodule: Module.__call__ as a C type (ModuleBase, the base class of
 * everyo.nn.Module where this extension is built; everyo.nn.module._PyModuleCall is the same in
 * Python, its specification and fallback).
 *
 * With no profiler it calls forward (or _call_impl, which runs the module's hooks) without a
 * Python frame of its own. With one it hands the call over through the hook protocol's
 * p.module_call(module, forward, args, kwargs) (everyo/profiler/recording/hooks.py), entered directly when
 * p is a recorder that the recorder's module-call contract (everyo/profiler/recording/module_call_api.h)
 * serves. What it needs is passed to bind() explicitly: the namespace `active` lives in
 * (everyo.profiler.recording.hooks' globals) and the contract's capsule (hooks.module_call_api()). A
 * capsule that is missing, misnamed or of another version leaves every call on the by-name path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../profiler/recording/module_call_api.h"

static PyObject *str_active, *str_forward, *str_call_impl, *str_hooked, *str_module_call;
static PyObject *hooks_ns;              /* where `active` lives (bind) */
static PyObject *api_capsule;           /* keeps the recorder's contract alive */
static const EveryoModuleCallAPI *api;  /* checked by bind(), else NULL: by name */

/* a module's kwargs as Python code takes them: a dict (a new, empty one for none) */
static PyObject *
kwargs_dict(PyObject *kwargs)
{
    return kwargs ? Py_NewRef(kwargs) : PyDict_New();
}

/* self.forward(*args), or self._call_impl(*args, **kwargs) for hooks or keyword arguments */
static PyObject *
call_unprofiled(PyObject *self, PyObject *args, PyObject *kwargs, int hooked)
{
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (!hooked && (kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0) && nargs < 8) {
        /* a loss's (input, target) too, without _call_impl's frame */
        PyObject *stack[8];
        stack[0] = self;
        for (Py_ssize_t i = 0; i < nargs; i++)
            stack[i + 1] = PyTuple_GET_ITEM(args, i);
        return PyObject_VectorcallMethod(str_forward, stack, (size_t)nargs + 1, NULL);
    }
    PyObject *f = PyObject_GetAttr(self, str_call_impl);
    if (f == NULL)
        return NULL;
    PyObject *r = PyObject_Call(f, args, kwargs);
    Py_DECREF(f);
    return r;
}

/* Module.__call__ (_PyModuleCall.__call__ in Python): with no profiler the module's call; with
   one, p.module_call(self, forward, args, kwargs), where forward is _call_impl when the module
   has hooks, else forward */
static PyObject *
mb_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *active = hooks_ns ? PyDict_GetItemWithError(hooks_ns, str_active) : NULL;
    if (active == NULL && PyErr_Occurred())
        return NULL;
    if (active == Py_None)
        active = NULL;
    Py_XINCREF(active); /* ours before any Python code runs (it may replace hooks.active) */
    PyObject *h = PyObject_GetAttr(self, str_hooked);
    int hooked = h == NULL ? -1 : h == Py_False ? 0 : h == Py_True ? 1 : PyObject_IsTrue(h);
    Py_XDECREF(h);
    if (hooked < 0 || active == NULL) {
        Py_XDECREF(active);
        return hooked < 0 ? NULL : call_unprofiled(self, args, kwargs, hooked);
    }
    PyObject *r = NULL;
    if (api != NULL && PyObject_TypeCheck(active, api->recorder_type)) {
        /* the recorder's contract: forward NULL is the module's own forward */
        PyObject *f = hooked ? PyObject_GetAttr(self, str_call_impl) : NULL;
        if (!hooked || f != NULL)
            r = api->record(active, self, f, args, kwargs);
        Py_XDECREF(f);
    }
    else { /* any other hook object: p.module_call(module, forward, args, kwargs) */
        PyObject *f = PyObject_GetAttr(self, hooked ? str_call_impl : str_forward);
        PyObject *kw = f ? kwargs_dict(kwargs) : NULL;
        if (kw != NULL)
            r = PyObject_CallMethodObjArgs(active, str_module_call, self, f, args, kw, NULL);
        Py_XDECREF(f);
        Py_XDECREF(kw);
    }
    Py_DECREF(active);
    return r;
}

/* a heap type, like the Python classes built on it: copyreg's protocol 0/1 pickling skips heap
   types when it looks for the first built-in base (object here), so modules pickle as before */
static PyType_Slot module_base_slots[] = {
    {Py_tp_call, mb_call},
    {Py_tp_doc, "The compiled Module.__call__ (the base class of everyo.nn.Module)."},
    {0, NULL}};

static PyType_Spec module_base_spec = {
    .name = "everyo.nn._cmodule.ModuleBase",
    .basicsize = sizeof(PyObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .slots = module_base_slots,
};

/* the contract in `capsule` where its name, version and fields are the ones this file was
   built with, else NULL (no error: the by-name path serves every hook object) */
static const EveryoModuleCallAPI *
checked_api(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, EVERYO_MODULE_CALL_API_NAME))
        return NULL;
    const EveryoModuleCallAPI *a = PyCapsule_GetPointer(capsule, EVERYO_MODULE_CALL_API_NAME);
    if (a == NULL || a->version != EVERYO_MODULE_CALL_API_VERSION || a->record == NULL ||
        a->recorder_type == NULL || !PyType_Check((PyObject *)a->recorder_type))
        return NULL;
    return a;
}

static PyObject *
bind(PyObject *module, PyObject *args)
{
    PyObject *ns, *capsule;
    if (!PyArg_ParseTuple(args, "O!O:bind", &PyDict_Type, &ns, &capsule))
        return NULL;
    const EveryoModuleCallAPI *a = checked_api(capsule);
    PyErr_Clear(); /* (PyCapsule_IsValid sets none; a bad pointer is a mismatch, not an error) */
    Py_XSETREF(hooks_ns, Py_NewRef(ns));
    api = NULL; /* before the capsule that held the old one may go */
    Py_XSETREF(api_capsule, a ? Py_NewRef(capsule) : NULL);
    api = a;
    return PyBool_FromLong(a != NULL);
}

static PyMethodDef module_methods[] = {
    {"bind", (PyCFunction)bind, METH_VARARGS,
     "bind(namespace, capsule) -> bool: ModuleBase reads `active` from namespace (hooks' "
     "globals) and enters recorders through capsule (hooks.module_call_api(), or None). True "
     "when the capsule's name and version match (recorders of its type are entered directly); "
     "else every profiler gets module_call by name."},
    {NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "everyo.nn._cmodule",
    .m_doc = "The compiled Module.__call__ of everyo's engine (see everyo/nn/module.py).",
    .m_size = -1,
    .m_methods = module_methods,
};

#define INTERN(var, text)                                                                        \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                      \
        return NULL;

PyMODINIT_FUNC
PyInit__cmodule(void)
{
    INTERN(str_active, "active");
    INTERN(str_forward, "forward");
    INTERN(str_call_impl, "_call_impl");
    INTERN(str_hooked, "_hooked");
    INTERN(str_module_call, "module_call");
    PyObject *module_base = PyType_FromSpec(&module_base_spec);
    if (module_base == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL || PyModule_AddObjectRef(m, "ModuleBase", module_base) < 0) {
        Py_XDECREF(m);
        Py_DECREF(module_base);
        return NULL;
    }
    Py_DECREF(module_base); /* the module holds it */
    return m;
}
