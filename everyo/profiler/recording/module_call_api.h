/*
 * The module-call contract between the engine's compiled Module.__call__ (everyo/nn/_cmodule.c)
 * and the compiled recorder (everyo/profiler/recording/_crecorder.c), the C form of the hook protocol's
 * p.module_call(module, forward, args, kwargs) (everyo/profiler/recording/hooks.py).
 *
 * The recorder exports one EveryoModuleCallAPI in a capsule named EVERYO_MODULE_CALL_API_NAME
 * (_crecorder.module_call_api); everyo.profiler.recording.hooks.module_call_api() hands it to the engine,
 * which checks the name and the version and otherwise calls p.module_call by name. Neither side
 * knows the other's types: the engine passes the module, the recorder runs the module's call.
 * A change to the struct or to what `record` promises bumps the version.
 */
#ifndef EVERYO_MODULE_CALL_API_H
#define EVERYO_MODULE_CALL_API_H

#include <Python.h>

#define EVERYO_MODULE_CALL_API_NAME "everyo.profiler.recording._crecorder.module_call_api"
#define EVERYO_MODULE_CALL_API_VERSION 1

typedef struct {
    int version; /* EVERYO_MODULE_CALL_API_VERSION of the recorder that made it */
    /* the recorders `record` serves: instances of this type and its subclasses; any other hook
       object gets p.module_call(...) by name */
    PyTypeObject *recorder_type;
    /* p.module_call(module, forward, args, kwargs), for p an instance of recorder_type:
       forward NULL means the module's own `forward`; args is a tuple, kwargs NULL or a dict
       (borrowed). A new reference, or NULL with an exception set. */
    PyObject *(*record)(PyObject *recorder, PyObject *module, PyObject *forward, PyObject *args,
                        PyObject *kwargs);
} EveryoModuleCallAPI;

#endif
