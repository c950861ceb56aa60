/*
 * everyo.profiler.sampling._csampler: the compiled way the sampler reads the main thread's stack.
 *
 * everyo/profiler/sampling/sampler.py holds the policy (which threads, which mode, the store, the
 * budget); where this extension was not built it samples the main thread with a timer signal
 * and a Python handler, which records the same samples at several times the cost. Here:
 *
 * - a C timer thread (no Python thread state, every signal blocked) waits on a monotonic
 *   condition variable until each tick of a fixed grid and queues one pending call
 *   (Py_AddPendingCall) unless one is still queued;
 * - the pending call runs on the main thread at its next eval-breaker check, the very points
 *   where a signal's Python handler would run, so the sample is where the thread is. It walks
 *   the frames (PyThreadState_GetFrame / PyFrame_GetBack / PyFrame_GetCode / PyFrame_GetLasti),
 *   finds the stack's id in a table keyed by the frames' code objects and instruction offsets,
 *   and appends (time, stack id, wall span, CPU span) to a buffer that the Python side drains
 *   into the run's SampleStore. A stack not seen before is interned by the Python sampler
 *   (`intern(frame)`, the same code the fallback uses), so both paths give the same ids.
 *
 * Python 3.10 to 3.12 set the eval breaker for a pending call only when the thread that adds
 * it is the main thread, so the timer thread also sets the main interpreter's eval breaker
 * itself (the CPython internal field, read from the headers of the Python it is built for;
 * 3.13 does it in Py_AddPendingCall). The main thread clears it when it runs the call; another
 * thread that sees it first takes the interpreter's slow check until then, as with a signal.
 *
 * POSIX threads and a monotonic condition variable (Linux): where the extension does not
 * build, setup.py goes on without it and the fallback samples.
 */
#define PY_SSIZE_T_CLEAN
#include <patchlevel.h>
#if PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030D0000
#define EVERYO_POKE_EVAL_BREAKER 1
#define Py_BUILD_CORE_MODULE 1 /* (for the main interpreter's eval breaker only) */
#endif
#include <Python.h>
#ifdef EVERYO_POKE_EVAL_BREAKER
#include <internal/pycore_interp.h>
#endif
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

static int64_t
mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the stack table: whole stacks, keyed by (code object, instruction offset) pairs ---- */

typedef struct {
    uint64_t hash;
    Py_ssize_t off; /* into the key arena */
    Py_ssize_t len; /* words: two per frame */
    int sid;        /* the store's stack id; -1: a free slot */
} Entry;

typedef struct {
    PyObject_HEAD
    /* set at construction */
    int64_t interval_ns;
    int64_t tid;
    PyObject *clock;  /* None: CLOCK_MONOTONIC (what time.perf_counter_ns reads) */
    PyObject *intern; /* intern(frame) -> stack id, for a stack not seen before */
    PyObject *on_full; /* called when the buffer holds flush_rows samples */
    Py_ssize_t flush_rows;
    /* the timer thread */
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int started, stopped, orphaned, holds_ref;
    pid_t pid;
    atomic_int stopping;
    atomic_int outstanding; /* a pending call is queued and has not run yet */
    atomic_llong queued_at; /* when the timer queued it (CLOCK_MONOTONIC ns; 0: not queued) */
    atomic_int main_cpu;    /* the CPU the main thread ran its last sample on (-1: unknown) */
    int64_t max_gap_ns;     /* a late timer's sample stands for at most this before the queue */
    int idle;               /* the timer wakes and queues nothing (the benchmark's floor) */
    /* the main thread's previous sample */
    int have_prev;
    int64_t prev_t, prev_cpu;
    /* the row buffer */
    int64_t *t, *wall, *cpu;
    int32_t *stack;
    Py_ssize_t rows, rows_cap;
    /* the walk and the stack table */
    uint64_t *walk;
    Py_ssize_t walk_cap;
    uint64_t *arena;
    Py_ssize_t arena_len, arena_cap;
    Entry *table;
    Py_ssize_t table_cap, table_used;
    Py_ssize_t errors, misses;
    int own_error; /* the error set is this sampler's own (no memory), not a callback's */
} MainSampler;

static int
grow(void **p, Py_ssize_t *cap, Py_ssize_t need, size_t item)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = PyMem_RawRealloc(*p, (size_t)n * item);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    *cap = n;
    return 0;
}

static uint64_t
hash_words(const uint64_t *w, Py_ssize_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static Entry *
table_find(MainSampler *s, const uint64_t *key, Py_ssize_t len, uint64_t h)
{
    if (s->table_cap == 0)
        return NULL;
    Py_ssize_t mask = s->table_cap - 1;
    for (Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)mask);; i = (i + 1) & mask) {
        Entry *e = &s->table[i];
        if (e->sid < 0)
            return e; /* the free slot where it would go */
        if (e->hash == h && e->len == len &&
            memcmp(s->arena + e->off, key, (size_t)len * sizeof(uint64_t)) == 0)
            return e;
    }
}

static int
table_grow(MainSampler *s)
{
    Py_ssize_t cap = s->table_cap ? s->table_cap * 2 : 256;
    Entry *old = s->table, *t = PyMem_RawMalloc((size_t)cap * sizeof(Entry));
    if (t == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < cap; i++)
        t[i].sid = -1;
    Py_ssize_t oldcap = s->table_cap;
    s->table = t;
    s->table_cap = cap;
    for (Py_ssize_t i = 0; i < oldcap; i++) {
        if (old[i].sid < 0)
            continue;
        Py_ssize_t mask = cap - 1, j = (Py_ssize_t)(old[i].hash & (uint64_t)mask);
        while (t[j].sid >= 0)
            j = (j + 1) & mask;
        t[j] = old[i];
    }
    PyMem_RawFree(old);
    return 0;
}

static int
table_add(MainSampler *s, const uint64_t *key, Py_ssize_t len, uint64_t h, int sid)
{
    if ((s->table_used + 1) * 2 > s->table_cap && table_grow(s) < 0)
        return -1;
    if (grow((void **)&s->arena, &s->arena_cap, s->arena_len + len, sizeof(uint64_t)) < 0)
        return -1;
    Entry *e = table_find(s, key, len, h);
    memcpy(s->arena + s->arena_len, key, (size_t)len * sizeof(uint64_t));
    e->hash = h;
    e->off = s->arena_len;
    e->len = len;
    e->sid = sid;
    s->arena_len += len;
    s->table_used++;
    return 0;
}

/* ---- one sample of the main thread (on the main thread, with the GIL) ---- */

static int
frame_lasti(PyFrameObject *f)
{
#if PY_VERSION_HEX >= 0x030B0000
    return PyFrame_GetLasti(f);
#else
    return f->f_lasti;
#endif
}

/* The stack id of the running stack, -2 when the thread runs no Python frame, -1 on error. */
static int
stack_of(MainSampler *s, PyFrameObject *top)
{
    Py_ssize_t n = 0;
    PyFrameObject *f = top;
    Py_INCREF(f);
    while (f != NULL) {
        if (grow((void **)&s->walk, &s->walk_cap, n + 2, sizeof(uint64_t)) < 0) {
            s->own_error = 1;
            Py_DECREF(f);
            return -1;
        }
        PyCodeObject *code = PyFrame_GetCode(f);
        /* (the code object stays alive: its frame is on the stack while this runs, and the
           store holds it from the stack's first sample on, so a pointer in the table is never
           reused by another code object) */
        s->walk[n++] = (uint64_t)(uintptr_t)code;
        s->walk[n++] = (uint64_t)(int64_t)frame_lasti(f);
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    uint64_t h = hash_words(s->walk, n);
    Entry *e = table_find(s, s->walk, n, h);
    if (e != NULL && e->sid >= 0)
        return e->sid;
    s->misses++;
    PyObject *r = PyObject_CallOneArg(s->intern, (PyObject *)top);
    if (r == NULL)
        return -1; /* the program's (its signal handler raised while intern ran) */
    long sid = PyLong_AsLong(r);
    Py_DECREF(r);
    if (sid == -1 && PyErr_Occurred())
        return -1;
    if (sid < 0) { /* intern could not intern it: this sample is lost, the next one tries */
        s->own_error = 1;
        PyErr_SetString(PyExc_RuntimeError, "a stack the sampler could not intern");
        return -1;
    }
    if (table_add(s, s->walk, n, h, (int)sid) < 0) {
        s->own_error = 1;
        return -1;
    }
    return (int)sid;
}

static int
read_clock(MainSampler *s, int64_t *now)
{
    if (s->clock == Py_None) {
        *now = mono_ns();
        return 0;
    }
    PyObject *r = PyObject_CallNoArgs(s->clock);
    if (r == NULL)
        return -1;
    *now = PyLong_AsLongLong(r);
    Py_DECREF(r);
    return *now == -1 && PyErr_Occurred() ? -1 : 0;
}

static int
take_sample(MainSampler *s, int64_t queued)
{
    int64_t now;
    if (read_clock(s, &now) < 0)
        return -1;
    int64_t cpu = thread_cpu_ns();
#ifdef __linux__
    atomic_store(&s->main_cpu, sched_getcpu());
#endif
    PyFrameObject *top = PyThreadState_GetFrame(PyThreadState_Get());
    if (top == NULL)
        return 0;
    int sid = stack_of(s, top);
    Py_DECREF(top);
    if (sid < 0)
        return -1;
    Py_ssize_t k = s->rows;
    if (k >= s->rows_cap) {
        Py_ssize_t cap = s->rows_cap, c2 = s->rows_cap, c3 = s->rows_cap, c4 = s->rows_cap;
        if (grow((void **)&s->t, &cap, k + 1, sizeof(int64_t)) < 0 ||
            grow((void **)&s->wall, &c2, k + 1, sizeof(int64_t)) < 0 ||
            grow((void **)&s->cpu, &c3, k + 1, sizeof(int64_t)) < 0 ||
            grow((void **)&s->stack, &c4, k + 1, sizeof(int32_t)) < 0) {
            s->own_error = 1;
            return -1;
        }
        s->rows_cap = cap;
    }
    /* the time this sample stands for: since the thread's previous one (since start for the
       first, or one interval where start did not read the clocks). The time the call waited
       for the thread counts whole: the thread was where the sample finds it, in a call that
       released the GIL or held off its core. Before the call was queued, at most max_gap:
       a timer thread that the OS held off says nothing of where the thread was meanwhile. */
    int64_t wall = s->interval_ns, used = 0;
    if (s->have_prev) {
        wall = now - s->prev_t;
        used = cpu > s->prev_cpu ? cpu - s->prev_cpu : 0;
        if (queued > 0 && s->max_gap_ns > 0) {
            int64_t waited = mono_ns() - queued;
            int64_t cap = (waited > 0 ? waited : 0) + s->max_gap_ns;
            wall = wall < cap ? wall : cap;
            used = used < cap ? used : cap;
        }
    }
    s->have_prev = 1;
    s->prev_t = now;
    s->prev_cpu = cpu;
    s->t[k] = now;
    s->stack[k] = sid;
    s->wall[k] = wall;
    s->cpu[k] = used;
    s->rows = k + 1;
    if (s->rows >= s->flush_rows && s->on_full != Py_None) {
        PyObject *r = PyObject_CallNoArgs(s->on_full);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

static int
pending_sample(void *arg)
{
    MainSampler *s = (MainSampler *)arg;
    int64_t queued = atomic_exchange(&s->queued_at, 0); /* (before the next tick sets it) */
    atomic_store(&s->outstanding, 0); /* (a tick while this runs queues the next) */
    if (s->stopped) {
        if (s->orphaned) { /* queued before stop: the timer's reference ends here */
            s->orphaned = 0;
            Py_DECREF(s);
        }
        return 0;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    s->own_error = 0;
    if (take_sample(s, queued) < 0) {
        if (!s->own_error) {
            /* raised by Python code the sample ran (intern, the flush, a clock): the Python
               side clears its own errors there (a lost sample), so this one is the program's
               (its signal handler ran meanwhile; a Ctrl-C), raised where the thread is */
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return -1;
        }
        s->errors++; /* a sample lost (no memory): never the program's error */
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
    return 0;
}

/* ---- the timer thread ---- */

static void
poke_main(void)
{
#ifdef EVERYO_POKE_EVAL_BREAKER
    PyInterpreterState *interp = PyInterpreterState_Main();
    _Py_atomic_store_relaxed(&interp->ceval.eval_breaker, 1);
#endif
}

/* The timer thread keeps off the CPU the main thread runs on, where the process may use
   another: woken there, it would preempt the thread it samples, and on a busy machine (no idle
   CPU for it) that cost the profiled code several times what the wake-up costs (a BLAS-heavy
   step: 14 % at 1 kHz on the same CPU, 5 % on the other; benchmarks/RESULTS.md). */
typedef struct {
#ifdef __linux__
    cpu_set_t all; /* the CPUs the thread that started the sampler may use */
#endif
    int count, excluded;
} Placement;

static void
placement_init(Placement *p)
{
    p->count = 0;
    p->excluded = -1;
#ifdef __linux__
    if (sched_getaffinity(0, sizeof p->all, &p->all) == 0)
        p->count = CPU_COUNT(&p->all);
#endif
}

static void
keep_off_main(MainSampler *s, Placement *p)
{
#ifdef __linux__
    int main_cpu = atomic_load(&s->main_cpu);
    if (p->count < 2 || main_cpu < 0 || main_cpu >= CPU_SETSIZE || main_cpu == p->excluded ||
        !CPU_ISSET(main_cpu, &p->all))
        return;
    cpu_set_t others = p->all;
    CPU_CLR(main_cpu, &others);
    if (sched_setaffinity(0, sizeof others, &others) == 0)
        p->excluded = main_cpu;
#else
    (void)s;
    (void)p;
#endif
}

static void *
timer_main(void *arg)
{
    MainSampler *s = (MainSampler *)arg;
    struct timespec tick;

    Placement place;
    placement_init(&place);
    int64_t next = mono_ns() + s->interval_ns;
    pthread_mutex_lock(&s->mutex);
    while (!atomic_load(&s->stopping)) {
        tick.tv_sec = next / 1000000000;
        tick.tv_nsec = next % 1000000000;
        int rc = pthread_cond_timedwait(&s->cond, &s->mutex, &tick);
        if (atomic_load(&s->stopping))
            break;
        if (rc != ETIMEDOUT)
            continue; /* a spurious wake-up: wait for the same tick */
        /* a fixed grid: late wake-ups do not add up; a tick missed altogether is skipped */
        int64_t now = mono_ns();
        next += s->interval_ns;
        if (next <= now)
            next = now + s->interval_ns;
        if (!s->idle && !atomic_exchange(&s->outstanding, 1)) {
            atomic_store(&s->queued_at, now);
            if (Py_AddPendingCall(pending_sample, s) < 0)
                atomic_store(&s->outstanding, 0); /* the queue is full: skip this tick */
            else
                poke_main();
        }
        keep_off_main(s, &place);
    }
    pthread_mutex_unlock(&s->mutex);
    return NULL;
}

/* ---- the Python type ---- */

static PyObject *
MainSampler_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"interval_ns", "tid",        "clock",      "intern",
                             "on_full",     "flush_rows", "max_gap_ns", "idle",
                             NULL};
    long long interval, tid, max_gap = 0;
    PyObject *clock, *intern, *on_full;
    Py_ssize_t flush_rows;
    int idle = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "LLOOOn|Lp", kwlist, &interval, &tid, &clock,
                                     &intern, &on_full, &flush_rows, &max_gap, &idle))
        return NULL;
    if (interval <= 0 || flush_rows <= 0 || max_gap < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "interval_ns and flush_rows must be positive, max_gap_ns not negative");
        return NULL;
    }
    if (!PyCallable_Check(intern) || (clock != Py_None && !PyCallable_Check(clock)) ||
        (on_full != Py_None && !PyCallable_Check(on_full))) {
        PyErr_SetString(PyExc_TypeError, "clock, intern and on_full must be callables (or None)");
        return NULL;
    }
    MainSampler *s = (MainSampler *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    s->interval_ns = interval;
    s->max_gap_ns = max_gap;
    s->idle = idle;
    s->tid = tid;
    s->flush_rows = flush_rows;
    Py_INCREF(clock);
    s->clock = clock;
    Py_INCREF(intern);
    s->intern = intern;
    Py_INCREF(on_full);
    s->on_full = on_full;
    pthread_mutex_init(&s->mutex, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&s->stopping, 0);
    atomic_init(&s->outstanding, 0);
    atomic_init(&s->queued_at, 0);
    atomic_init(&s->main_cpu, -1);
    return (PyObject *)s;
}

static PyObject *
MainSampler_start(MainSampler *s, PyObject *unused)
{
    if (s->started) {
        PyErr_SetString(PyExc_RuntimeError, "this sampler was started before");
        return NULL;
    }
    /* (the first sample stands for the time since now: start runs on the sampled thread) */
    if (read_clock(s, &s->prev_t) < 0)
        return NULL;
    s->prev_cpu = thread_cpu_ns();
    s->have_prev = 1;
#ifdef __linux__
    atomic_store(&s->main_cpu, sched_getcpu());
#endif
    /* the timer thread takes no signal: a Ctrl-C is for the main thread */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    Py_INCREF(s); /* the timer's reference: a queued pending call points here */
    s->holds_ref = 1;
    int rc = pthread_create(&s->thread, NULL, timer_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        s->holds_ref = 0;
        Py_DECREF(s);
        errno = rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    s->started = 1;
    s->pid = getpid();
    Py_RETURN_NONE;
}

static PyObject *
MainSampler_stop(MainSampler *s, PyObject *unused)
{
    if (!s->started || s->stopped)
        Py_RETURN_NONE;
    if (s->pid == getpid()) { /* (a forked child has no timer thread to stop) */
        pthread_mutex_lock(&s->mutex);
        atomic_store(&s->stopping, 1);
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->mutex);
        Py_BEGIN_ALLOW_THREADS
        pthread_join(s->thread, NULL);
        Py_END_ALLOW_THREADS
    }
    s->stopped = 1;
    if (s->holds_ref) {
        s->holds_ref = 0;
        if (atomic_load(&s->outstanding))
            s->orphaned = 1; /* the queued call drops the reference */
        else
            Py_DECREF(s);
    }
    Py_RETURN_NONE;
}

static PyObject *
MainSampler_sample(MainSampler *s, PyObject *unused)
{
    /* (the pending call's sample, taken now: its caller's frame is the innermost) */
    if (take_sample(s, 0) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
bytes_of(const void *p, Py_ssize_t n)
{
    return PyBytes_FromStringAndSize(n ? (const char *)p : "", n);
}

static PyObject *
MainSampler_drain(MainSampler *s, PyObject *unused)
{
    Py_ssize_t k = s->rows;
    PyObject *out = Py_BuildValue("(NNNN)", bytes_of(s->t, k * 8), bytes_of(s->stack, k * 4),
                                  bytes_of(s->wall, k * 8), bytes_of(s->cpu, k * 8));
    if (out != NULL)
        s->rows = 0;
    return out;
}

static PyObject *
MainSampler_get_buffered(MainSampler *s, void *unused)
{
    return PyLong_FromSsize_t(s->rows);
}

static PyObject *
MainSampler_get_errors(MainSampler *s, void *unused)
{
    return PyLong_FromSsize_t(s->errors);
}

static PyObject *
MainSampler_get_stacks(MainSampler *s, void *unused)
{
    return PyLong_FromSsize_t(s->table_used);
}

static PyObject *
MainSampler_get_nbytes(MainSampler *s, void *unused)
{
    size_t n = (size_t)s->arena_cap * sizeof(uint64_t) + (size_t)s->table_cap * sizeof(Entry) +
               (size_t)s->walk_cap * sizeof(uint64_t) +
               (size_t)s->rows_cap * (3 * sizeof(int64_t) + sizeof(int32_t));
    return PyLong_FromSize_t(n);
}

static PyObject *
MainSampler_get_running(MainSampler *s, void *unused)
{
    return PyBool_FromLong(s->started && !s->stopped);
}

static int
MainSampler_traverse(MainSampler *s, visitproc visit, void *arg)
{
    Py_VISIT(s->clock);
    Py_VISIT(s->intern);
    Py_VISIT(s->on_full);
    return 0;
}

static int
MainSampler_clear(MainSampler *s)
{
    Py_CLEAR(s->clock);
    Py_CLEAR(s->intern);
    Py_CLEAR(s->on_full);
    return 0;
}

static void
MainSampler_dealloc(MainSampler *s)
{
    /* (never while the timer runs: the timer's reference keeps a running sampler alive) */
    PyObject_GC_UnTrack(s);
    MainSampler_clear(s);
    PyMem_RawFree(s->t);
    PyMem_RawFree(s->wall);
    PyMem_RawFree(s->cpu);
    PyMem_RawFree(s->stack);
    PyMem_RawFree(s->walk);
    PyMem_RawFree(s->arena);
    PyMem_RawFree(s->table);
    if (!s->started || s->pid == getpid()) {
        /* A forked child leaves them be: the parent's timer thread, which the child does not
           have, may wait on the condition or hold the mutex in the child's copy, and
           pthread_cond_destroy would wait for that waiter for ever (issue 44). */
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->mutex);
    }
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyMethodDef MainSampler_methods[] = {
    {"start", (PyCFunction)MainSampler_start, METH_NOARGS,
     "Start the timer thread (call on the main thread)."},
    {"stop", (PyCFunction)MainSampler_stop, METH_NOARGS,
     "Stop and join the timer thread (idempotent); no sample is taken after it returns."},
    {"sample", (PyCFunction)MainSampler_sample, METH_NOARGS,
     "Take one sample of the calling thread now, as the timer's pending call does (tests)."},
    {"drain", (PyCFunction)MainSampler_drain, METH_NOARGS,
     "(t, stack, wall, cpu) of the samples buffered so far, as bytes of int64, int32, int64 and "
     "int64 in native order; the buffer is emptied."},
    {NULL}};

static PyGetSetDef MainSampler_getset[] = {
    {"buffered", (getter)MainSampler_get_buffered, NULL, "samples not drained yet", NULL},
    {"errors", (getter)MainSampler_get_errors, NULL, "samples lost to an error", NULL},
    {"stacks", (getter)MainSampler_get_stacks, NULL, "distinct stacks seen", NULL},
    {"running", (getter)MainSampler_get_running, NULL, "the timer thread runs", NULL},
    {"nbytes", (getter)MainSampler_get_nbytes, NULL,
     "bytes held: the stack table, its keys, the walk and the row buffer", NULL},
    {NULL}};

static PyTypeObject MainSamplerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "everyo.profiler.sampling._csampler.MainSampler",
    .tp_basicsize = sizeof(MainSampler),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "MainSampler(interval_ns, tid, clock, intern, on_full, flush_rows, max_gap_ns=0, "
              "idle=False): samples the main thread's stack every interval from a C timer "
              "thread (idle: the timer wakes and queues nothing, what a benchmark's floor "
              "measures).",
    .tp_new = MainSampler_new,
    .tp_dealloc = (destructor)MainSampler_dealloc,
    .tp_traverse = (traverseproc)MainSampler_traverse,
    .tp_clear = (inquiry)MainSampler_clear,
    .tp_methods = MainSampler_methods,
    .tp_getset = MainSampler_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "everyo.profiler.sampling._csampler",
    "The compiled main-thread sampler (see everyo/profiler/sampling/sampler.py).", -1, NULL};

PyMODINIT_FUNC
PyInit__csampler(void)
{
    if (PyType_Ready(&MainSamplerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&MainSamplerType);
    if (PyModule_AddObject(m, "MainSampler", (PyObject *)&MainSamplerType) < 0) {
        Py_DECREF(&MainSamplerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
