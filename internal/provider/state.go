package provider

import (
	"encoding/binary"
	"math"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/listing"
)

// profilesState encodes the state of browserprofile_profiles, an object of
// profile_keys (list of string) and profiles (list of objects of
// profile_key and raw_json), in msgpack, the wire form of Terraform values,
// straight from the decoded list into one buffer of the right size: no copy
// of any record on the way. Attributes are in sorted order, as tftypes
// writes them (TestProfilesState_matchesTftypes holds the two together).
func profilesState(profiles []listing.Profile) []byte {
	size := 64
	for _, p := range profiles {
		size += 2*len(p.Key) + len(p.Raw) + 40
	}
	b := appendStateHead(make([]byte, 0, size), profiles)
	for _, p := range profiles {
		b = append(appendFraming(b, p), p.Raw...)
	}
	return b
}

// appendStateHead appends the state up to its first profile object: the
// object's header, profile_keys with every key, and the header of profiles.
func appendStateHead(b []byte, profiles []listing.Profile) []byte {
	b = msgpackMap2(b)
	b = msgpackStr(b, "profile_keys")
	b = msgpackArrayLen(b, len(profiles))
	for _, p := range profiles {
		b = msgpackStr(b, p.Key)
	}
	b = msgpackStr(b, "profiles")
	return msgpackArrayLen(b, len(profiles))
}

// appendFraming appends a profile object up to its record: the object's
// header, profile_key, and raw_json's name and string header.
func appendFraming(b []byte, p listing.Profile) []byte {
	b = msgpackMap2(b)
	b = msgpackStr(b, "profile_key")
	b = msgpackStr(b, p.Key)
	b = msgpackStr(b, "raw_json")
	return msgpackStrHeader(b, len(p.Raw))
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

// msgpackMap2 is the header of a map of two entries: the state and its
// profile objects each have two attributes.
func msgpackMap2(b []byte) []byte {
	return append(b, 0x80|2)
}
