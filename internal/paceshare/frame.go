package paceshare

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/pace"
)

// The state in its checked frame: opened under the step's lock, read
// whole or found damaged, and written in place (the package doc).

// openState opens the state the directory names now, unless it is the
// one open already. The lock is held.
func (s *Store) openState() error {
	path := s.path(".state")
	if s.state != nil {
		if same(s.state, path) {
			return nil
		}
		_ = s.state.Close()
		s.state = nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return err
	}
	s.state = f
	return nil
}

// frame opens every state: a magic, then the length and CRC-32 of what
// follows it.
const frame = "BPSTATE1"

// read returns the state in its frame: nil when the file is empty, and
// nil with pace.ErrHealed when it is damaged.
func (s *Store) read() ([]byte, error) {
	info, err := s.state.Stat()
	if err != nil || info.Size() == 0 {
		return nil, err
	}
	b := make([]byte, info.Size())
	if _, err := s.state.ReadAt(b, 0); err != nil {
		return nil, err
	}
	head := len(frame) + 8
	if len(b) < head || string(b[:len(frame)]) != frame {
		return nil, fmt.Errorf("%w: %s is not a state this provider wrote", pace.ErrHealed, s.state.Name())
	}
	n, sum := binary.BigEndian.Uint32(b[len(frame):]), binary.BigEndian.Uint32(b[len(frame)+4:])
	if uint64(n) > uint64(len(b)-head) || crc32.ChecksumIEEE(b[head:head+int(n)]) != sum {
		return nil, fmt.Errorf("%w: %s is cut short or changed", pace.ErrHealed, s.state.Name())
	}
	return b[head : head+int(n)], nil
}

// write replaces the state, in place, in its frame.
func (s *Store) write(state []byte) error {
	b := make([]byte, 0, len(frame)+8+len(state))
	b = append(b, frame...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(state)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(state))
	b = append(b, state...)
	if _, err := s.state.WriteAt(b, 0); err != nil {
		return err
	}
	return s.state.Truncate(int64(len(b)))
}
