//go:build cuda || dynlib

package dynlib

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// hg_dlopen opens path with RTLD_NOW and RTLD_GLOBAL or RTLD_LOCAL; on failure it returns NULL and
// sets *msg to a copy of dlerror's message, which the caller frees.
static void* hg_dlopen(const char* path, int global, char** msg) {
	dlerror();
	void* h = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	if (!h) {
		const char* e = dlerror();
		*msg = strdup(e ? e : "dlopen failed");
	}
	return h;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// Symbol is one function of a loader's table: the address of Name (or, where the library has no
// Name, of Alt: an older name of the same function) is stored at Addr, the address of the table's
// function pointer.
type Symbol struct {
	Name, Alt string
	Addr      unsafe.Pointer
}

// Lib is a library Spec.Open opened, with the libraries it preloaded for it.
type Lib struct {
	Path      string
	handle    unsafe.Pointer
	preloaded []unsafe.Pointer
}

// Open dlopens path (RTLD_NOW | RTLD_LOCAL) and binds every symbol of syms, after dlopening with
// RTLD_GLOBAL each of preload that opens (libraries path needs that the dynamic loader would not
// find: cuBLAS's libcublasLt beside it; "" is skipped). Its errors are Load's reasons: "not found"
// for a path with a slash that does not exist, "dlopen: " and dlerror's message, and "not a usable
// NAME: no symbol SYMBOL" for the first symbol missing.
func (s Spec) Open(path string, syms []Symbol, preload ...string) (*Lib, error) {
	if strings.Contains(path, "/") {
		if _, err := os.Stat(path); err != nil {
			return nil, errors.New("not found")
		}
	}
	l := &Lib{Path: path}
	for _, p := range preload {
		if p == "" {
			continue
		}
		if h, err := dlopen(p, true); err == nil {
			l.preloaded = append(l.preloaded, h)
		}
	}
	h, err := dlopen(path, false)
	if err != nil {
		l.Close()
		return nil, err
	}
	l.handle = h
	for _, sym := range syms {
		p := l.sym(sym.Name)
		if p == nil && sym.Alt != "" {
			p = l.sym(sym.Alt)
		}
		if p == nil {
			l.Close()
			return nil, fmt.Errorf("not a usable %s: no symbol %s", s.Name, sym.Name)
		}
		*(*unsafe.Pointer)(sym.Addr) = p
	}
	return l, nil
}

func dlopen(path string, global bool) (unsafe.Pointer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	g := C.int(0)
	if global {
		g = 1
	}
	var msg *C.char
	h := C.hg_dlopen(cpath, g, &msg)
	if h == nil {
		defer C.free(unsafe.Pointer(msg))
		return nil, fmt.Errorf("dlopen: %s", C.GoString(msg))
	}
	return h, nil
}

func (l *Lib) sym(name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.dlsym(l.handle, cname)
}

// Close unloads the library, then the libraries preloaded for it; a second Close does nothing.
func (l *Lib) Close() {
	if l.handle != nil {
		C.dlclose(l.handle)
		l.handle = nil
	}
	for i := len(l.preloaded) - 1; i >= 0; i-- {
		C.dlclose(l.preloaded[i])
	}
	l.preloaded = nil
}
