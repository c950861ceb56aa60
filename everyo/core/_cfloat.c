/* The calling thread's floating-point mode: subnormals flushed to zero, for a scope.
 *
 * everyo.core.float_mode runs the engine's backward passes and optimizer steps between
 * flush_begin() and flush_end(). Inside, the CPU treats subnormal inputs as zero and writes
 * zero for subnormal results (x86: MXCSR's DAZ and FTZ bits; AArch64: FPCR's FZ bit), which
 * NumPy cannot ask for. The mode is per thread, so only the calling thread's arithmetic
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

#include <string.h>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#include <xmmintrin.h>
#define FLOAT_MODE_X86 1
typedef unsigned int control_word;
#define FTZ_BIT 0x8000u
#define DAZ_BIT 0x0040u
static control_word flush_bits = FTZ_BIT; /* DAZ added at import where the CPU has it */
static control_word read_mode(void) { return _mm_getcsr(); }
static void write_mode(control_word w) { _mm_setcsr(w); }

/* DAZ exists where FXSAVE's MXCSR_MASK has bit 6 (a mask of 0 means the default 0xFFBF,
 * without it): setting a bit the CPU lacks would fault. */
static int
has_daz(void)
{
#if defined(__GNUC__) || defined(__clang__)
    unsigned char area[512] __attribute__((aligned(16)));
    unsigned int mask;
    memset(area, 0, sizeof(area));
    __asm__ __volatile__("fxsave %0" : "=m"(area));
    memcpy(&mask, area + 28, sizeof(mask));
    if (mask == 0)
        mask = 0xFFBFu;
    return (mask & DAZ_BIT) != 0;
#else
    return 1; /* every x86-64 CPU a current MSVC build runs on has DAZ */
#endif
}

#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#include <stdint.h>
#define FLOAT_MODE_ARM64 1
typedef uint64_t control_word;
static control_word flush_bits = (control_word)1 << 24; /* FPCR.FZ: inputs and results */
static control_word
read_mode(void)
{
    control_word w;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(w));
    return w;
}
static void write_mode(control_word w) { __asm__ __volatile__("msr fpcr, %0" : : "r"(w)); }
#endif

#if defined(FLOAT_MODE_X86) || defined(FLOAT_MODE_ARM64)
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
#else
#define FLOAT_MODE_SUPPORTED 0

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
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cfloat",
    "The calling thread's flush-to-zero mode (see everyo.core.float_mode).", -1, methods,
};

PyMODINIT_FUNC
PyInit__cfloat(void)
{
#if defined(FLOAT_MODE_X86)
    if (has_daz())
        flush_bits |= DAZ_BIT;
#endif
    return PyModule_Create(&module);
}
