package route_test

import (
	"errors"
	"testing"

	"github.com/keydeck/keydeck/internal/route"
)

func TestAPINameBytes(t *testing.T) {
	for _, tc := range []struct {
		plain, b64 string
		has, has64 bool
		want       string
		bad        bool
	}{
		{plain: " x ", has: true, want: " x "},
		{b64: "Y29uZjr/", has64: true, want: "conf:\xff"},
		{b64: "Y29uZjr_", has64: true, want: "conf:\xff"},
		{b64: "eA", has64: true, want: "x"},
		{b64: "PGI Ig==", has64: true, want: "<b>\""},
		{b64: "eA==", has64: true, want: "x"},
		{b64: "!!", has64: true, bad: true},
		{plain: "x", has: true, b64: "eA==", has64: true, bad: true},
		{bad: true},
		{plain: "", has: true, bad: true},
		{plain: "seventeen bytes!!", has: true, bad: true},
	} {
		got, err := route.APIName("name", tc.plain, tc.has, tc.b64, tc.has64, 16)
		if (err != nil) != tc.bad || !tc.bad && got != tc.want {
			t.Errorf("APIName(%q, %q) = %q, %v", tc.plain, tc.b64, got, err)
		}
		if err != nil && !errors.Is(err, route.ErrParam) {
			t.Errorf("error %v is not ErrParam", err)
		}
	}
}
