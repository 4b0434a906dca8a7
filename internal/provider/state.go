package provider

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A data source's state is written in msgpack, the wire form of Terraform
// values, straight from what the data source read, into one buffer: for a
// list of 100,000 records, building Terraform's value types first costs
// several times the read itself (server.go). The state is derived from the
// schema, so that the two cannot drift apart: each attribute, in the sorted
// order tftypes writes an object's, is written by the data source's writer
// for it, or, for an attribute the configuration sets, copied from the
// configuration. A computed attribute with no writer, or a writer for no
// attribute, is an error, not a state that silently lacks it
// (TestStateWriter_* and TestProfilesState_matchesTftypes).

// appendFunc appends one value's msgpack to b.
type appendFunc func(b []byte) []byte

// appendState appends the state of a data source whose schema is s: the
// attributes in writers from them, the others from config (the request's
// configuration, of the schema's type).
func appendState(ctx context.Context, b []byte, s schema.Schema, writers map[string]appendFunc, config tftypes.Value) ([]byte, error) {
	typ, ok := s.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("the schema's type is not an object")
	}
	for name := range writers {
		if _, ok := typ.AttributeTypes[name]; !ok {
			return nil, fmt.Errorf("a state writer for %q, which the schema does not have", name)
		}
	}
	var configured map[string]tftypes.Value
	if !config.IsNull() && config.IsKnown() {
		if err := config.As(&configured); err != nil {
			return nil, err
		}
	}
	names := slices.Sorted(maps.Keys(typ.AttributeTypes))
	b = msgpackMapLen(b, len(names))
	for _, name := range names {
		b = msgpackStr(b, name)
		if write, ok := writers[name]; ok {
			b = write(b)
			continue
		}
		if a, ok := s.Attributes[name]; ok && a.IsComputed() && !a.IsOptional() {
			return nil, fmt.Errorf("the computed attribute %q has no state writer", name)
		}
		v, ok := configured[name]
		if !ok {
			v = tftypes.NewValue(typ.AttributeTypes[name], nil)
		}
		dv, err := tfprotov6.NewDynamicValue(typ.AttributeTypes[name], v)
		if err != nil {
			return nil, err
		}
		b = append(b, dv.MsgPack...)
	}
	return b, nil
}

// objectWriter returns what appends an object of type typ for one item,
// each attribute by fields[name]: every attribute must have a field, and
// every field an attribute. The attributes' order and names are worked out
// once, not per item.
func objectWriter[T any](typ tftypes.Object, fields map[string]func(b []byte, item T) []byte) (func(b []byte, item T) []byte, error) {
	names := slices.Sorted(maps.Keys(typ.AttributeTypes))
	if len(fields) != len(names) {
		return nil, fmt.Errorf("the object has attributes %q, and writers for %q", names, slices.Sorted(maps.Keys(fields)))
	}
	head := msgpackMapLen(nil, len(names))
	writers := make([]func(b []byte, item T) []byte, len(names))
	keys := make([][]byte, len(names))
	for i, name := range names {
		if writers[i] = fields[name]; writers[i] == nil {
			return nil, fmt.Errorf("the object's attribute %q has no writer", name)
		}
		keys[i] = msgpackStr(nil, name)
	}
	return func(b []byte, item T) []byte {
		b = append(b, head...)
		for i, write := range writers {
			b = write(append(b, keys[i]...), item)
		}
		return b
	}, nil
}

// The msgpack forms the state needs, in their shortest encodings, as
// the msgpack specification requires of a canonical writer.

func msgpackStr[T ~string | ~[]byte](b []byte, s T) []byte {
	return append(msgpackStrHeader(b, len(s)), s...)
}

func msgpackStrHeader(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
}

func msgpackArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

func msgpackMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}
