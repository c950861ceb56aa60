/* The calling thread's floating-point mode: subnormals flushed to zero, for a scope.
 *
 * everyo.core.float_mode runs the engine's backward passes and optimizer steps between
 * flush_begin() and flush_end(). Inside, the CPU writes zero for results that would be
 * subnormal (x86: MXCSR's FTZ bit), which NumPy cannot ask for; subnormal inputs are read as
 * they are. The mode is per thread, so only the calling thread's arithmetic
 * (NumPy's loops, single-threaded BLAS) is affected; BLAS worker threads keep their own.
 *
 * The thread's depth of scopes and the bits the outermost one replaced live here, not in the
 * caller's frame: the caller calls flush_begin() inside its try and flush_end() in its finally,
 * so an interrupt that lands just after flush_begin() returns still puts the mode back.
 *
 * supported() -> bool     whether this CPU's mode can be set here
 * flush_begin() -> None   enter a scope: the outermost one sets the flush bits
 * flush_end() -> None     leave it: the outermost one puts back the bits it replaced (the status
 *                         flags raised meanwhile stay, for NumPy to read); without a scope open
 *                         on this thread, nothing
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>


#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#include <xmmintrin.h>
#define FLOAT_MODE_X86 1
typedef unsigned int control_word;
/* FTZ only, not DAZ: results that would be subnormal are written as zero, but a subnormal the
 * forward pass saved (in IEEE mode) is read as what it is. With DAZ as well, a backward that
 * divides by such a value (log's g / p for a softmax probability of exp(-95)) divided by zero:
 * NaN gradients where IEEE gives finite ones. */
static const control_word flush_bits = 0x8000u; /* MXCSR.FTZ */
static control_word read_mode(void) { return _mm_getcsr(); }
static void write_mode(control_word w) { _mm_setcsr(w); }
#endif
/* Elsewhere nothing is flushed. AArch64's FPCR.FZ would flush inputs too (the NaN above), and
 * its current cores compute subnormals at full speed. */

#if defined(FLOAT_MODE_X86)
#define FLOAT_MODE_SUPPORTED 1

#if defined(_MSC_VER)
#define THREAD_LOCAL __declspec(thread)
#else
#define THREAD_LOCAL _Thread_local
#endif
static THREAD_LOCAL unsigned long depth = 0;  /* open scopes on this thread */
static THREAD_LOCAL control_word replaced = 0; /* the mode before the outermost one */

static PyObject *
float_flush_begin(PyObject *self, PyObject *unused)
{
    if (depth++ == 0) {
        replaced = read_mode();
        write_mode(replaced | flush_bits);
    }
    Py_RETURN_NONE;
}

static PyObject *
float_flush_end(PyObject *self, PyObject *unused)
{
    if (depth > 0 && --depth == 0)
        write_mode((read_mode() & ~flush_bits) | (replaced & flush_bits));
    Py_RETURN_NONE;
}
/* None outside a scope; inside one, whether the mode the outermost scope replaced flushed:
   what a thread started here must run with (it is born with its creator's mode) */
static PyObject *
float_outside(PyObject *self, PyObject *unused)
{
    if (depth == 0)
        Py_RETURN_NONE;
    return PyBool_FromLong((replaced & flush_bits) != 0);
}

/* a new thread's first call: its flush bits as they were outside its creator's scope */
static PyObject *
float_unscoped(PyObject *self, PyObject *arg)
{
    int flush = PyObject_IsTrue(arg);
    if (flush < 0)
        return NULL;
    if (depth == 0)
        write_mode((read_mode() & ~flush_bits) | (flush ? flush_bits : 0u));
    Py_RETURN_NONE;
}
#else
#define FLOAT_MODE_SUPPORTED 0

static PyObject *
float_outside(PyObject *self, PyObject *unused)
{
    Py_RETURN_NONE;
}

static PyObject *
float_unscoped(PyObject *self, PyObject *arg)
{
    Py_RETURN_NONE;
}

static PyObject *
float_flush_begin(PyObject *self, PyObject *unused)
{
    Py_RETURN_NONE;
}

static PyObject *
float_flush_end(PyObject *self, PyObject *unused)
{
    Py_RETURN_NONE;
}
#endif

static PyObject *
float_supported(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(FLOAT_MODE_SUPPORTED);
}

static PyMethodDef methods[] = {
    {"supported", float_supported, METH_NOARGS,
     "supported() -> whether this CPU's flush-to-zero mode can be set"},
    {"flush_begin", float_flush_begin, METH_NOARGS,
     "flush_begin() -> None: enter a scope; the outermost sets the flush-to-zero bits"},
    {"flush_end", float_flush_end, METH_NOARGS,
     "flush_end() -> None: leave a scope; the outermost puts back the bits it replaced"},
    {"outside", float_outside, METH_NOARGS,
     "outside() -> None outside a scope, else whether the mode it replaced flushed"},
    {"unscoped", float_unscoped, METH_O,
     "unscoped(flush) -> None: a new thread's mode as outside its creator's scope"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cfloat",
    "The calling thread's flush-to-zero mode (see everyo.core.float_mode).", -1, methods,
};

PyMODINIT_FUNC
PyInit__cfloat(void)
{
    return PyModule_Create(&module);
}
