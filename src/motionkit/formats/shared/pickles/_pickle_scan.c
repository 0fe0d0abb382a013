/* The pickle pre-scan of motionkit.formats.shared.pickles.pickle_scan, compiled.
 *
 * pickle_scan.py holds the rules twice over: the opcode table (derived from pickletools)
 * and the limits, which it hands to configure() once at import, and scan_reference(),
 * the same walk in Python, which the tests hold this one to (same offset, same message
 * on every input). This file only makes the walk cost a few nanoseconds per opcode, so
 * a hostile stream of one-byte opcodes cannot make the scan slow. Nothing is built, no
 * argument is copied, and the GIL is released while the bytes are walked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an opcode means to the scan; configure() checks Python names them alike. */
enum { PLAIN, PUT, GET, DUP, MARK, FILL, FRAME, FORBIDDEN, PERSID, STOP, ROLE_COUNT };
static const char *const role_names[ROLE_COUNT] = {
    "plain", "put", "get", "dup", "mark", "fill", "frame", "forbidden", "persid", "stop"};

typedef struct {
    char name[24];
    int valid;
    int kind;    /* 0: no argument; 1, 2, 4, 8: that many bytes; -1: text line(s);
                    -2 .. -5: a 1/4/4/8-byte length, then that many bytes */
    int pair;    /* two text lines (GLOBAL, INST) */
    int mark_at; /* where the mark sits among the values it takes, or -1 */
    int plain;   /* values taken (marks not counted) */
    int after;   /* values left */
    int role;
    int counted; /* dictionary/set insertions: 1 per opcode, 2 per pair, 3 per item */
    int numeric; /* text argument limited to max_text_number bytes */
    int container; /* bytes of the empty list, dict or set it builds, else 0 */
} Op;

/* The limits (set once by configure; read into each walk before the GIL is released). */
typedef struct {
    Py_ssize_t stack, marks, depth, inserts, text_number;
    long long reuse_slack, container_allowance, container_factor;
} Limits;

static Op ops[256];
static Limits limits;
static PyObject *problem_class; /* PickleProblem */

typedef struct {
    long long weight; /* bytes of data the value carries */
    long long depth;  /* how deeply it nests */
} Value;

/* A growable array of values (the stack or the memo). */
typedef struct {
    Value *items;
    Py_ssize_t len, cap;
} Values;

static int push(Values *values, Value value) {
    if (values->len == values->cap) {
        Py_ssize_t cap = values->cap ? 2 * values->cap : 256;
        Value *items = realloc(values->items, (size_t)cap * sizeof(Value));
        if (items == NULL) return -1;
        values->items = items;
        values->cap = cap;
    }
    values->items[values->len++] = value;
    return 0;
}

/* Why a scan stopped; the message is written once the GIL is held again. */
enum {
    OK, E_MEMORY, E_INVALID, E_FORBIDDEN, E_TRUNCATED, E_TEXT, E_BAD_INDEX, E_COUNTED,
    E_FRAME, E_MEMO_ORDER, E_EMPTY_PUT, E_MEMO_MISSING, E_MARKS, E_REUSE, E_NO_MARK,
    E_UNDERFLOW, E_DEPTH, E_STACK, E_INSERTS, E_CONTAINERS, E_NO_STOP
};

typedef struct {
    int error;
    int op;                 /* opcode byte the error is about */
    Py_ssize_t at;          /* its offset, counted from origin */
    unsigned long long number; /* memo index or declared length */
    int negative;           /* the declared length was negative (BINSTRING, LONG4) */
    Py_ssize_t remain;      /* bytes left after a length */
    Py_ssize_t end;         /* offset just past STOP */
    long long limit;        /* bytes this pickle's containers may take */
} Outcome;

static unsigned long long little_endian(const unsigned char *bytes, int width) {
    unsigned long long number = 0;
    for (int i = width - 1; i >= 0; i--) number = (number << 8) | bytes[i];
    return number;
}

/* A text memo index: 1 to 9 ASCII digits, as pickle writes them. */
static int text_index(const unsigned char *text, Py_ssize_t length, unsigned long long *number) {
    if (length < 1 || length > 9) return -1;
    *number = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return -1;
        *number = *number * 10 + (unsigned long long)(text[i] - '0');
    }
    return 0;
}

#define FAIL(code) do { out->error = (code); goto done; } while (0)

static void walk(const unsigned char *data, Py_ssize_t start, Py_ssize_t size,
                 Py_ssize_t origin, int allow_persistent, Limits max, Outcome *out) {
    Values stack = {0}, memo = {0};
    Py_ssize_t *marks = malloc((size_t)(max.marks + 1) * sizeof(Py_ssize_t));
    Py_ssize_t mark_count = 0;
    long long inserts = 0, reused = 0, containers = 0;
    long long reuse_limit = (long long)(size - start) + max.reuse_slack;
    out->limit = max.container_allowance + (long long)(size - start) * max.container_factor;
    Py_ssize_t pos = start;
    if (marks == NULL) FAIL(E_MEMORY);
    while (pos < size) {
        const Op *op = &ops[data[pos]];
        out->op = data[pos];
        out->at = pos - origin;
        if (!op->valid) FAIL(E_INVALID);
        pos++;
        if (op->role == FORBIDDEN || (op->role == PERSID && !allow_persistent))
            FAIL(E_FORBIDDEN);
        containers += op->container;
        if (containers > out->limit) FAIL(E_CONTAINERS);
        unsigned long long number = 0;
        long long weight = 0;
        if (op->kind > 0) {
            if (op->kind > size - pos) FAIL(E_TRUNCATED);
            number = little_endian(data + pos, op->kind);
            pos += op->kind;
        } else if (op->kind == -1) {
            Py_ssize_t limit = op->numeric ? max.text_number : size;
            for (int line = 0; line < (op->pair ? 2 : 1); line++) {
                Py_ssize_t reach = limit + 1 < size - pos ? limit + 1 : size - pos;
                const unsigned char *end = reach > 0 ? memchr(data + pos, '\n', (size_t)reach)
                                                     : NULL;
                if (end == NULL) FAIL(E_TEXT);
                if ((op->role == PUT || op->role == GET)
                        && text_index(data + pos, end - (data + pos), &number) < 0)
                    FAIL(E_BAD_INDEX);
                weight += end - (data + pos);
                pos = end - data + 1;
            }
        } else if (op->kind < -1) {
            int width = op->kind == -2 ? 1 : op->kind == -5 ? 8 : 4;
            if (width > size - pos) FAIL(E_TRUNCATED);
            unsigned long long length = little_endian(data + pos, width);
            pos += width;
            out->remain = size - pos;
            if (op->kind == -3 && (length & 0x80000000ULL)) { /* signed 4 bytes */
                out->number = 0x100000000ULL - length;
                out->negative = 1;
                FAIL(E_COUNTED);
            }
            if (length > (unsigned long long)(size - pos)) {
                out->number = length;
                FAIL(E_COUNTED);
            }
            weight = (long long)length;
            pos += (Py_ssize_t)length;
        }
        long long depth = 0;
        if (op->role != PLAIN) {
            if (op->role == FRAME) {
                if (number > (unsigned long long)(size - pos)) FAIL(E_FRAME);
            } else if (op->role == PUT) {
                unsigned long long index = op->kind == 0 ? (unsigned long long)memo.len : number;
                out->number = index;
                if (index > (unsigned long long)memo.len) FAIL(E_MEMO_ORDER);
                if (stack.len == 0) FAIL(E_EMPTY_PUT);
                if (index == (unsigned long long)memo.len) {
                    if (push(&memo, stack.items[stack.len - 1]) < 0) FAIL(E_MEMORY);
                } else {
                    memo.items[index] = stack.items[stack.len - 1];
                }
                continue;
            } else if (op->role == GET) {
                out->number = number;
                if (number >= (unsigned long long)memo.len) FAIL(E_MEMO_MISSING);
                weight = memo.items[number].weight;
                depth = memo.items[number].depth;
                reused += weight;
            } else if (op->role == DUP && stack.len) {
                reused += stack.items[stack.len - 1].weight;
            } else if (op->role == MARK) {
                marks[mark_count++] = stack.len;
                if (mark_count > max.marks) FAIL(E_MARKS);
                continue;
            }
            if (reused > reuse_limit) FAIL(E_REUSE);
        }
        Py_ssize_t first;
        if (op->mark_at >= 0) {
            if (mark_count == 0) FAIL(E_NO_MARK);
            Py_ssize_t top = marks[--mark_count];
            if (op->counted == 2) inserts += (stack.len - top) / 2;
            else if (op->counted == 3) inserts += stack.len - top;
            first = top - op->mark_at;
        } else {
            inserts += op->counted;
            first = stack.len - op->plain;
        }
        if (first < 0 || (mark_count && first < marks[mark_count - 1])) FAIL(E_UNDERFLOW);
        if (first < stack.len) {
            const Value *taken = stack.items + first;
            Py_ssize_t count = stack.len - first;
            long long deepest_rest = -1;
            for (Py_ssize_t i = 0; i < count; i++) {
                weight += taken[i].weight;
                if (i > 0 && taken[i].depth > deepest_rest) deepest_rest = taken[i].depth;
            }
            if (op->after) {
                if (op->role == FILL)
                    depth = taken[0].depth > deepest_rest + 1 ? taken[0].depth : deepest_rest + 1;
                else if (op->role == DUP)
                    depth = taken[0].depth;
                else
                    depth = (taken[0].depth > deepest_rest ? taken[0].depth : deepest_rest) + 1;
                if (depth > max.depth) FAIL(E_DEPTH);
            }
            stack.len = first;
        }
        for (int copy = 0; copy < op->after; copy++) {
            if (push(&stack, (Value){weight, depth}) < 0) FAIL(E_MEMORY);
        }
        if (op->after && stack.len > max.stack) FAIL(E_STACK);
        if (inserts > max.inserts) FAIL(E_INSERTS);
        if (op->role == STOP) {
            out->end = pos;
            FAIL(OK);
        }
    }
    out->error = E_NO_STOP;
done:
    free(stack.items);
    free(memo.items);
    free(marks);
}

/* Raise PickleProblem with the message scan_reference() gives for the same stop. */
static PyObject *refuse(const Outcome *out) {
    char message[256];
    const char *name = ops[out->op].name;
    Py_ssize_t at = out->at;
    switch (out->error) {
    case E_MEMORY:
        return PyErr_NoMemory();
    case E_INVALID:
        snprintf(message, sizeof message, "invalid pickle opcode 0x%02x at byte %zd", out->op, at);
        break;
    case E_FORBIDDEN:
        snprintf(message, sizeof message, "forbidden pickle opcode %s at byte %zd", name, at);
        break;
    case E_TRUNCATED:
        snprintf(message, sizeof message, "truncated pickle at byte %zd", at);
        break;
    case E_TEXT:
        snprintf(message, sizeof message, "unterminated or overlong %s argument at byte %zd",
                 name, at);
        break;
    case E_BAD_INDEX:
        snprintf(message, sizeof message, "bad %s index at byte %zd", name, at);
        break;
    case E_COUNTED:
        snprintf(message, sizeof message, "%s at byte %zd declares %s%llu bytes but only %zd remain",
                 name, at, out->negative ? "-" : "", out->number, out->remain);
        break;
    case E_FRAME:
        snprintf(message, sizeof message, "FRAME at byte %zd is longer than the data", at);
        break;
    case E_MEMO_ORDER:
        snprintf(message, sizeof message, "memo index %llu out of order at byte %zd", out->number, at);
        break;
    case E_EMPTY_PUT:
        snprintf(message, sizeof message, "%s on an empty stack at byte %zd", name, at);
        break;
    case E_MEMO_MISSING:
        snprintf(message, sizeof message, "memo index %llu not yet stored at byte %zd",
                 out->number, at);
        break;
    case E_MARKS:
        snprintf(message, sizeof message, "pickle nests deeper than %zd marks", limits.marks);
        break;
    case E_REUSE:
        snprintf(message, sizeof message,
                 "pickle re-uses large data more often than its size allows");
        break;
    case E_NO_MARK:
        snprintf(message, sizeof message, "%s without MARK at byte %zd", name, at);
        break;
    case E_UNDERFLOW:
        snprintf(message, sizeof message, "pickle stack underflow at byte %zd (%s)", at, name);
        break;
    case E_DEPTH:
        snprintf(message, sizeof message, "pickle nests deeper than %zd levels (at byte %zd)",
                 limits.depth, at);
        break;
    case E_STACK:
        snprintf(message, sizeof message, "pickle holds more than %zd values at once", limits.stack);
        break;
    case E_INSERTS:
        snprintf(message, sizeof message, "pickle inserts more than %zd dictionary/set items",
                 limits.inserts);
        break;
    case E_CONTAINERS:
        snprintf(message, sizeof message,
                 "pickle's lists, dicts and sets take more than %lld bytes (at byte %zd)",
                 out->limit, at);
        break;
    default:
        snprintf(message, sizeof message, "pickle data was truncated (no STOP)");
    }
    PyErr_SetString(problem_class, message);
    return NULL;
}

static PyObject *scan(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"data", "start", "stop", "origin", "allow_persistent", NULL};
    Py_buffer buffer;
    Py_ssize_t start = 0, origin = 0;
    PyObject *stop_arg = Py_None;
    int allow_persistent = 0;
    if (problem_class == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pickle scan used before configure()");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|n$Onp", keywords, &buffer, &start,
                                     &stop_arg, &origin, &allow_persistent))
        return NULL;
    Py_ssize_t stop = buffer.len;
    if (stop_arg != Py_None) {
        stop = PyLong_AsSsize_t(stop_arg);
        if (stop == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&buffer);
            return NULL;
        }
    }
    if (start < 0 || stop < start || stop > buffer.len || origin < 0 || origin > start) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError, "scan bounds lie outside the data");
        return NULL;
    }
    Outcome out = {0};
    Py_BEGIN_ALLOW_THREADS
    walk((const unsigned char *)buffer.buf, start, stop, origin, allow_persistent, limits, &out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buffer);
    if (out.error != OK) return refuse(&out);
    return PyLong_FromSsize_t(out.end);
}

static int read_int(PyObject *item, Py_ssize_t index, int *target) {
    long value = PyLong_AsLong(PyTuple_GET_ITEM(item, index));
    if (value == -1 && PyErr_Occurred()) return -1;
    if (value < -1000000 || value > 1000000) {
        PyErr_SetString(PyExc_ValueError, "opcode table field out of range");
        return -1;
    }
    *target = (int)value;
    return 0;
}

/* configure(table, roles, limits, problem): the opcode table (256 entries, None or
 * (name, kind, pair, mark_at, plain, after, role, counted, numeric, container)), the role
 * names in order, the limits (max_stack, max_marks, max_depth, max_inserts, max_reuse_slack,
 * max_text_number, container_allowance, container_factor) and the exception class to raise.
 * Once only: a walk reads them without the GIL. */
static PyObject *configure(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *table, *roles, *problem;
    Limits given;
    if (problem_class != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the pickle scan is configured already");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!(nnnnLnLL)O", &PyList_Type, &table, &PyTuple_Type, &roles,
                          &given.stack, &given.marks, &given.depth, &given.inserts,
                          &given.reuse_slack, &given.text_number, &given.container_allowance,
                          &given.container_factor, &problem))
        return NULL;
    if (given.stack < 0 || given.marks < 0 || given.depth < 0 || given.inserts < 0
            || given.reuse_slack < 0 || given.text_number < 0 || given.container_allowance < 0
            || given.container_factor < 0 || given.container_factor > 1000) {
        PyErr_SetString(PyExc_ValueError, "pickle scan limits must be positive");
        return NULL;
    }
    if (PyList_GET_SIZE(table) != 256 || PyTuple_GET_SIZE(roles) != ROLE_COUNT) {
        PyErr_Format(PyExc_ValueError, "opcode table must have 256 entries and %d roles",
                     ROLE_COUNT);
        return NULL;
    }
    for (int role = 0; role < ROLE_COUNT; role++) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(roles, role));
        if (name == NULL) return NULL;
        if (strcmp(name, role_names[role]) != 0) {
            PyErr_Format(PyExc_ValueError, "role %d is %s here but %s in Python", role,
                         role_names[role], name);
            return NULL;
        }
    }
    Op parsed[256];
    memset(parsed, 0, sizeof parsed);
    for (int code = 0; code < 256; code++) {
        PyObject *item = PyList_GET_ITEM(table, code);
        if (item == Py_None) continue;
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 10) {
            PyErr_SetString(PyExc_ValueError, "opcode entries are 10-tuples");
            return NULL;
        }
        Op *op = &parsed[code];
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(item, 0));
        if (name == NULL) return NULL;
        snprintf(op->name, sizeof op->name, "%s", name);
        int *fields[] = {&op->kind, &op->pair, &op->mark_at, &op->plain, &op->after,
                         &op->role, &op->counted, &op->numeric, &op->container};
        for (int field = 0; field < 9; field++)
            if (read_int(item, field + 1, fields[field]) < 0) return NULL;
        if (op->role < 0 || op->role >= ROLE_COUNT || op->after < 0 || op->after > 2
                || !(op->kind >= -5 && op->kind <= 8)) {
            PyErr_Format(PyExc_ValueError, "opcode %s has an entry this scan cannot follow", name);
            return NULL;
        }
        op->valid = 1;
    }
    memcpy(ops, parsed, sizeof ops);
    limits = given;
    Py_INCREF(problem);
    problem_class = problem;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_VARARGS | METH_KEYWORDS,
     "scan(data, start=0, *, stop=None, origin=0, allow_persistent=False) -> int\n\n"
     "Check one pickle's opcodes against the limits; return the offset just past STOP."},
    {"configure", configure, METH_VARARGS,
     "configure(table, roles, limits, problem): the rules the scan follows."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_pickle_scan", "Compiled pickle pre-scan (see pickle_scan.py).", -1,
    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pickle_scan(void) { return PyModule_Create(&module_definition); }
