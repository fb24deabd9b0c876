package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShortKernel(t *testing.T) {
	cases := map[string]string{
		"void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>, long)": "at::native::indexSelectLargeIndex<…>",
		"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)": "at::native::vectorized_elementwise_kernel<…>",
		"ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)": "ncclDevKernel_SendRecv",
		"ampere_sgemm_32x32_sliced1x4_tn":                                "ampere_sgemm_32x32_sliced1x4_tn",
		"Memcpy HtoD (Pageable -> Device)":                               "Memcpy HtoD (Pageable -> Device)",
		"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)": "cudnn::ops::nchwToNhwcKernel<…>",
		"(weird)": "(weird)",
	}
	for in, want := range cases {
		if got := shortKernel(in); got != want {
			t.Errorf("shortKernel(%.60q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzShortKernel: any name shortens without panicking, to valid UTF-8 no longer than the name
// plus the ellipses it adds, and shortening again changes nothing.
func FuzzShortKernel(f *testing.F) {
	for _, s := range []string{"void f<int>(int)", "a<<b>>(c)", "((", ">>)<", "Memset (Device)", "x<é>(ü)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := shortKernel(name)
		if utf8.ValidString(name) && !utf8.ValidString(got) {
			t.Fatalf("shortKernel(%q) = %q: invalid UTF-8", name, got)
		}
		if len(got) > len(name)+len("…>")*strings.Count(name, "<") {
			t.Fatalf("shortKernel(%q) = %q: longer than the name", name, got)
		}
		if again := shortKernel(got); again != got && got != name {
			t.Fatalf("shortKernel not idempotent: %q → %q → %q", name, got, again)
		}
	})
}
