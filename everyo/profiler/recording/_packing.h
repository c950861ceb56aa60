/* Generated from everyo/profiler/recording/packing.py
   by `python -m everyo.profiler.recording.packing`;
   do not edit (tests/profiler/test_packing.py checks it is current). */
#ifndef EVERYO_PACKING_H
#define EVERYO_PACKING_H
#define KEY_BITS 24
#define DEPTH_BITS 16
#define SHAPE_SHIFT 40
#define KEY_MASK 16777215LL
#define MODE_PLAIN 1
#define MODE_SHAPES 2
#endif
