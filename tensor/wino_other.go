//go:build !amd64 || noasm

package tensor

// No eight-patch Winograd kernel in this build: the scalar transform runs.
func winoX8() bool { return false }

func winoIn43x8([]float32, int, int, *[288]float32) {
	panic("tensor: no Winograd x8 kernel in this build")
}

func winoIn43x8G([]float32, int, int, []float32, *[8]int, int, *[288]float32) {
	panic("tensor: no Winograd x8 kernel in this build")
}

func winoOut43x8([]float32, int, int, *[32]*float32, *[8]float32, *[192]float32, float32) {
	panic("tensor: no Winograd x8 kernel in this build")
}

func winoGradOut43x8([]float32, int, int, *[32]*float32, *[192]float32) {
	panic("tensor: no Winograd x8 kernel in this build")
}

func winoWLanes() int { return 0 }

func winoW43([]float32, int, int, *[16]*float32, bool, *[432]float32) {
	panic("tensor: no Winograd weight kernel in this build")
}

func winoWG43([]float32, int, []float32, int, int, *[432]float32) {
	panic("tensor: no Winograd weight-gradient kernel in this build")
}

func padRows(dst, src []float32, rows, w, wp int) { padRowsGo(dst, src, rows, w, wp) }
