package provider

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"google.golang.org/grpc/encoding"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/browserprofile/terraform-provider-browserprofile/internal/client"
	"github.com/browserprofile/terraform-provider-browserprofile/internal/standin"
)

// answerType is a message shaped like tfplugin6's ReadDataSource.Response
// (state, then diagnostics after it) with DynamicValue's msgpack and json.
func answerType(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	str := func(s string) *string { return &s }
	num := func(n int32) *int32 { return &n }
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	bytesT, msgT, strT := descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum(), descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: str("answer.proto"), Package: str("test"), Syntax: str("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: str("DynamicValue"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: str("msgpack"), Number: num(1), Label: opt, Type: bytesT, JsonName: str("msgpack")},
				{Name: str("json"), Number: num(2), Label: opt, Type: bytesT, JsonName: str("json")},
			}},
			{Name: str("Answer"), Field: []*descriptorpb.FieldDescriptorProto{
				{Name: str("state"), Number: num(1), Label: opt, Type: msgT, TypeName: str(".test.DynamicValue"), JsonName: str("state")},
				{Name: str("diagnostics"), Number: num(2), Label: rep, Type: strT, JsonName: str("diagnostics")},
			}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Answer")
}

func newAnswer(desc protoreflect.MessageDescriptor, msgpack []byte) *dynamicpb.Message {
	m := dynamicpb.NewMessage(desc)
	state := m.Mutable(desc.Fields().ByName("state")).Message()
	state.Set(state.Descriptor().Fields().ByName("msgpack"), protoreflect.ValueOfBytes(msgpack))
	diags := m.Mutable(desc.Fields().ByName("diagnostics")).List()
	diags.Append(protoreflect.ValueOfString("a warning"))
	return m
}

// What spliceCodec sends decodes to the same answer as what gRPC's own codec
// sends, for a state in one piece, large or small, and for one in parts;
// the message is left as it was; and the collector's pace is restored once
// the transport has freed what it sent.
func TestSpliceCodec_decodesAsTheDefault(t *testing.T) {
	desc := answerType(t)
	codec := encoding.GetCodecV2("proto")
	if _, ok := codec.(spliceCodec); !ok {
		t.Fatalf("the registered proto codec is %T", codec)
	}
	profiles := make([]client.Profile, 9000)
	for i := range profiles {
		key := fmt.Sprintf("k%05d-é", i)
		profiles[i] = client.Profile{Key: key, Raw: fmt.Appendf(nil, `{"profile_key":%q,"pad":"%0200d"}`, key, i)}
	}
	whole := profilesState(profiles)
	gcBefore := debug.SetGCPercent(100)
	defer debug.SetGCPercent(gcBefore)

	for name, small := range map[string]bool{"whole": false, "small": true, "parts": false} {
		state := whole
		if small {
			state = whole[:100]
		}
		m := newAnswer(desc, state)
		if name == "parts" {
			sent := collectOftenWhileSending()
			head, rest := profilesStateParts(profiles, sent)
			spliceLater(head, rest, sent)
			m = newAnswer(desc, head)
		}
		data, err := codec.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := dynamicpb.NewMessage(desc)
		if err := proto.Unmarshal(data.Materialize(), got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data.Free()
		if want := newAnswer(desc, state); !proto.Equal(got, want) {
			t.Errorf("%s: the spliced answer decodes differently", name)
		}
		if pace := debug.SetGCPercent(100); pace != 100 {
			t.Errorf("%s: the collector's pace is %d after sending, want it restored to 100", name, pace)
		}
	}
	if !bytes.Equal(whole, bytes.Join(func() [][]byte {
		head, rest := profilesStateParts(profiles, func() {})
		out := [][]byte{head}
		for _, b := range rest[2:] {
			out = append(out, b.ReadOnlyData())
		}
		return out
	}(), nil)) {
		t.Error("the state in parts differs from the state in one piece")
	}
}

// A list whose state is spliced reaches Terraform whole, through the
// provider's real gRPC server.
func TestAccProfilesDataSource_largeListReachesTerraformWhole(t *testing.T) {
	t.Parallel()   // after TestSpliceCodec_decodesAsTheDefault, which sends in parts too
	const n = 9000 // about 2 MB of records, over spliceFrom
	env := standin.DemoEnvironments()
	env[1].Profiles = standin.Generate(n)
	root, _ := testStandin(t, standin.Options{Environments: env})
	before := splicedInParts.Load()
	last := fmt.Sprintf("bp_gen_%07d", n-1)
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6, Steps: []resource.TestStep{{Config: listConfig(root), ConfigStateChecks: []statecheck.StateCheck{
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profile_keys").AtSliceIndex(n-1), knownvalue.StringExact(last)),
		statecheck.ExpectKnownValue("data.browserprofile_profiles.all", tfjsonpath.New("profiles").AtSliceIndex(n-1),
			knownvalue.ObjectExact(map[string]knownvalue.Check{
				"profile_key": knownvalue.StringExact(last),
				"raw_json":    knownvalue.StringExact(string(env[1].Profiles[n-1])),
			})),
	}}}})
	if splicedInParts.Load() == before {
		t.Error("no answer was sent with its state in parts")
	}
}
