package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{in: "20,100", want: []int{20, 100}},
		{in: " 5 , 10,", want: []int{5, 10}},
		{in: "7", want: []int{7}},
		{in: "", wantErr: true},
		{in: "20,x", wantErr: true},
		{in: "0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSizes(tt.in)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
