package provider

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/proto" // registers the codec wrapped here first
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
)

// gRPC's protobuf codec encodes a message into one buffer of its full size.
// A data source's answer is mostly its state: with 100,000 profiles, 25 MB
// of msgpack, nearly all of it the records of a response body the process
// still holds. Encoded the usual way, the process would hold the body, the
// state built from it, and the state's copy in the answer, each at once.
//
// spliceCodec sends the state without copying it: the answer is encoded
// without the state's bytes, which follow as a field of their own, read by
// the transport in frame-sized pieces. Protobuf readers merge a message
// field that appears twice (the specification requires it), so Terraform
// reads the same state; TestSpliceCodec_decodesAsTheDefault holds the two
// encodings together.
//
// The state's bytes may even come in parts: the list's fast path (server.go)
// hands the codec the head of the state in the answer and the rest, which
// points into the response body, through spliceLater, so that the state is
// never built in one piece at all.
//
// It is registered under the default codec's name, as gRPC allows in an init
// function, and leaves every other message, and small states, to the codec
// it wraps.
type spliceCodec struct {
	encoding.CodecV2
}

// spliceFrom is the size of state from which it is spliced rather than
// copied.
const spliceFrom = 1 << 20

func init() {
	encoding.RegisterCodecV2(spliceCodec{encoding.GetCodecV2("proto")})
}

// spliced holds the rest of states whose head is in an answer on its way to
// the codec, by the address of the head's first byte. The head is not kept
// alive from here: should the answer never be sent (the call cancelled),
// the entry goes when the head is collected.
var spliced sync.Map // uintptr → splicedRest

// splicedInParts counts the answers sent with their state in parts, for the
// tests.
var splicedInParts atomic.Int64

type splicedRest struct {
	headLen int // checked too: an address alone could be a new buffer's, reused before the cleanup ran
	rest    mem.BufferSlice
}

// spliceLater registers rest as what follows head in the state of an answer
// spliceCodec will encode. rest's first two slots are left empty for the
// codec. Should the answer never be encoded, sent is called when head is
// collected.
func spliceLater(head []byte, rest mem.BufferSlice, sent func()) {
	key := uintptr(unsafe.Pointer(unsafe.SliceData(head)))
	spliced.Store(key, splicedRest{len(head), rest})
	runtime.AddCleanup(unsafe.SliceData(head), func(key uintptr) {
		if _, unsent := spliced.LoadAndDelete(key); unsent {
			sent()
		}
	}, key)
}

// willSplice tells whether an answer to this call goes through spliceCodec:
// it is a gRPC call, and the protocol data that terraform-plugin-go can be
// asked to write to files (TF_LOG_SDK_PROTO_DATA_DIR) is not wanted, as
// those files would hold only the head. Tests and benchmarks that call the
// server directly get the state in one piece.
func willSplice(ctx context.Context) bool {
	return grpc.ServerTransportStreamFromContext(ctx) != nil && os.Getenv("TF_LOG_SDK_PROTO_DATA_DIR") == ""
}

// answerState encodes browserprofile_profiles' state for the answer to a
// call: in parts for spliceCodec when the call allows it and the list was
// read from large bodies, in one buffer otherwise.
func answerState(ctx context.Context, list *client.List) []byte {
	if list.Bytes < spliceFrom || !willSplice(ctx) {
		return profilesState(list.Profiles)
	}
	sent := collectOftenWhileSending()
	head, rest := profilesStateParts(list.Profiles, sent)
	spliceLater(head, rest, sent)
	return head
}

// While a large state is sent, the transport allocates a little for each
// frame of it (gRPC rebuilds a list of the parts in each 16 KB frame), some
// 12 MB with 100,000 profiles. Left to the collector's default pace, that
// would all be new memory on top of the state's; collected often, it reuses
// the same few megabytes, for some milliseconds of CPU. The pace is lowered
// while any spliced state is on its way, and restored after the last.
var sending struct {
	sync.Mutex
	n     int
	gcWas int
}

// gcWhileSending is the collector's pace (GOGC) while a spliced state is
// sent: a collection each time the heap grows by a tenth.
const gcWhileSending = 10

// collectOftenWhileSending lowers the collector's pace and returns the
// function that restores it, once, however often it is called.
func collectOftenWhileSending() func() {
	sending.Lock()
	defer sending.Unlock()
	if sending.n == 0 {
		sending.gcWas = debug.SetGCPercent(gcWhileSending)
	}
	sending.n++
	return sync.OnceFunc(func() {
		sending.Lock()
		defer sending.Unlock()
		if sending.n--; sending.n == 0 {
			debug.SetGCPercent(sending.gcWas)
		}
	})
}

// onFree calls sent when the transport frees the buffer it pools: once the
// buffer has been sent, or the call has ended without sending it.
type onFree struct{ sent func() }

func (p onFree) Get(n int) *[]byte { b := make([]byte, n); return &b }
func (p onFree) Put(*[]byte)       { p.sent() }

func (c spliceCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return c.CodecV2.Marshal(v)
	}
	state, stateField, bytesField, head := answerStateOf(m.ProtoReflect())
	if head == nil {
		return c.CodecV2.Marshal(v)
	}
	parts := mem.BufferSlice{nil, nil}
	r, _ := spliced.LoadAndDelete(uintptr(unsafe.Pointer(unsafe.SliceData(head))))
	if r, ok := r.(splicedRest); ok && r.headLen == len(head) {
		parts = r.rest
		splicedInParts.Add(1)
	} else if len(head) < spliceFrom {
		return c.CodecV2.Marshal(v)
	}
	parts[1] = mem.SliceBuffer(head)
	n := 0
	for _, b := range parts[1:] {
		n += b.Len()
	}

	state.Clear(bytesField)
	prefix, err := proto.Marshal(m)
	state.Set(bytesField, protoreflect.ValueOfBytes(head))
	if err != nil {
		return nil, err
	}
	prefix = protowire.AppendTag(prefix, stateField.Number(), protowire.BytesType)
	prefix = protowire.AppendVarint(prefix, uint64(protowire.SizeTag(bytesField.Number())+protowire.SizeBytes(n)))
	prefix = protowire.AppendTag(prefix, bytesField.Number(), protowire.BytesType)
	prefix = protowire.AppendVarint(prefix, uint64(n))
	parts[0] = mem.SliceBuffer(prefix)
	return parts, nil
}

// answerStateOf finds an answer's state: a "state" message field with
// "msgpack" bytes, as tfplugin6's ReadDataSource.Response has.
func answerStateOf(m protoreflect.Message) (state protoreflect.Message, stateField, bytesField protoreflect.FieldDescriptor, b []byte) {
	stateField = m.Descriptor().Fields().ByName("state")
	if stateField == nil || stateField.Kind() != protoreflect.MessageKind || stateField.IsList() || !m.Has(stateField) {
		return nil, nil, nil, nil
	}
	state = m.Mutable(stateField).Message()
	bytesField = state.Descriptor().Fields().ByName("msgpack")
	if bytesField == nil || bytesField.Kind() != protoreflect.BytesKind || bytesField.IsList() {
		return nil, nil, nil, nil
	}
	if b = state.Get(bytesField).Bytes(); len(b) == 0 {
		return nil, nil, nil, nil
	}
	return state, stateField, bytesField, b
}
