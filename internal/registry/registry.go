// Package registry is a provider registry for the install tests: it serves
// releases as goreleaser leaves them (zips, SHA256SUMS and its detached GPG
// signature) through the provider registry protocol, providers.v1, so that
// terraform init and tofu init install the provider as users do, from a
// registry, checking the signature and writing the lock file.
//
// It serves files byte for byte and computes nothing from them but the list
// of platforms: the hashes it announces are read from SHA256SUMS, so an
// archive changed after signing is served as it is, and caught by the CLI.
//
// It depends on nothing else in the project.
package registry

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Release is one version of the provider, as goreleaser wrote it to Dir.
type Release struct {
	Version string
	Dir     string
	// KeyID (the 16 hex digits of the long key ID) and KeyArmor (the
	// ASCII-armored public key) name the key that signed SHA256SUMS.
	KeyID    string
	KeyArmor string
}

// ReadRehearsal reads the folder scripts/release-rehearsal.sh writes: the
// version from its SHA256SUMS file's name, and the key that signed it
// (signing-key.id, signing-key.asc).
func ReadRehearsal(dir string) (Release, error) {
	sums, err := filepath.Glob(filepath.Join(dir, "terraform-provider-*_*_SHA256SUMS"))
	if err != nil || len(sums) != 1 {
		return Release{}, fmt.Errorf("%s: want one terraform-provider-<type>_<version>_SHA256SUMS, found %d", dir, len(sums))
	}
	name := strings.TrimSuffix(filepath.Base(sums[0]), "_SHA256SUMS")
	version := name[strings.LastIndex(name, "_")+1:]
	id, err := os.ReadFile(filepath.Join(dir, "signing-key.id"))
	if err != nil {
		return Release{}, err
	}
	armor, err := os.ReadFile(filepath.Join(dir, "signing-key.asc"))
	if err != nil {
		return Release{}, err
	}
	return Release{Version: version, Dir: dir, KeyID: strings.TrimSpace(string(id)), KeyArmor: string(armor)}, nil
}

// hosts are the public registries whose providers a CLI configuration
// sends to a registry on loopback: Terraform's and OpenTofu's.
var hosts = []string{"registry.terraform.io", "registry.opentofu.org"}

// CLIConfig is the CLI configuration (TF_CLI_CONFIG_FILE) that installs
// providers from both hosts out of the registry served at base
// ("http://127.0.0.1:PORT"): a host block each, naming its providers.v1
// service.
func CLIConfig(base string) string {
	var b strings.Builder
	for _, host := range hosts {
		fmt.Fprintf(&b, "host %q {\n  services = {\n    \"providers.v1\" = %q\n  }\n}\n", host, base+"/v1/providers/")
	}
	return b.String()
}

// Registry serves the releases of one provider, namespace/type, under
// /v1/providers/ (the providers.v1 service address) and their files under
// /files/.
type Registry struct {
	namespace, typ string

	mu       sync.Mutex
	versions map[string]*published
	order    []string // versions in the order published
}

type published struct {
	Release
	sums     string
	archives map[string]archive // by "os_arch"
}

type archive struct {
	filename, shasum string
}

// New returns a registry of the provider namespace/type with no versions.
func New(namespace, typ string) *Registry {
	return &Registry{namespace: namespace, typ: typ, versions: map[string]*published{}}
}

// Publish adds a release, reading its platforms and their hashes from its
// SHA256SUMS file.
func (r *Registry) Publish(rel Release) error {
	sums, err := r.fileName(rel.Version, "SHA256SUMS")
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(rel.Dir, sums))
	if err != nil {
		return err
	}
	defer f.Close()
	p := &published{Release: rel, sums: sums, archives: map[string]archive{}}
	prefix := r.fileNamePrefix(rel.Version)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		hash, name, ok := strings.Cut(sc.Text(), "  ")
		platform, isZip := strings.CutSuffix(strings.TrimPrefix(name, prefix), ".zip")
		if !ok || !isZip || !strings.HasPrefix(name, prefix) {
			continue
		}
		p.archives[platform] = archive{filename: name, shasum: hash}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(p.archives) == 0 {
		return fmt.Errorf("%s lists no archive named %s<os>_<arch>.zip", sums, prefix)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.versions[rel.Version]; !dup {
		r.order = append(r.order, rel.Version)
	}
	r.versions[rel.Version] = p
	return nil
}

// fileNamePrefix is what every archive's name starts with:
// terraform-provider-TYPE_VERSION_.
func (r *Registry) fileNamePrefix(version string) string {
	return fmt.Sprintf("terraform-provider-%s_%s_", r.typ, version)
}

func (r *Registry) fileName(version, suffix string) (string, error) {
	if version == "" || strings.ContainsAny(version, `/\`) {
		return "", fmt.Errorf("%q is not a version", version)
	}
	return r.fileNamePrefix(version) + suffix, nil
}

func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet {
		http.Error(w, "only GET", http.StatusMethodNotAllowed)
		return
	}
	base := "/v1/providers/" + r.namespace + "/" + r.typ + "/"
	switch path := req.URL.Path; {
	case path == base+"versions":
		r.serveVersions(w)
	case strings.HasPrefix(path, base):
		// {version}/download/{os}/{arch}
		parts := strings.Split(strings.TrimPrefix(path, base), "/")
		if len(parts) != 4 || parts[1] != "download" {
			http.NotFound(w, req)
			return
		}
		r.serveDownload(w, req, parts[0], parts[2]+"_"+parts[3])
	case strings.HasPrefix(path, "/files/"):
		r.serveFile(w, req, strings.TrimPrefix(path, "/files/"))
	default:
		http.NotFound(w, req)
	}
}

func (r *Registry) serveVersions(w http.ResponseWriter) {
	type platform struct {
		OS   string `json:"os"`
		Arch string `json:"arch"`
	}
	type version struct {
		Version   string     `json:"version"`
		Protocols []string   `json:"protocols"`
		Platforms []platform `json:"platforms"`
	}
	r.mu.Lock()
	out := struct {
		Versions []version `json:"versions"`
	}{Versions: []version{}}
	for _, v := range r.order {
		p := r.versions[v]
		ver := version{Version: v, Protocols: []string{"6.0"}}
		for key := range p.archives {
			osName, arch, _ := strings.Cut(key, "_")
			ver.Platforms = append(ver.Platforms, platform{OS: osName, Arch: arch})
		}
		out.Versions = append(out.Versions, ver)
	}
	r.mu.Unlock()
	writeJSON(w, out)
}

func (r *Registry) serveDownload(w http.ResponseWriter, req *http.Request, version, platform string) {
	p, ok := r.version(version)
	var a archive
	if ok {
		a, ok = p.archives[platform]
	}
	if !ok {
		http.NotFound(w, req)
		return
	}
	osName, arch, _ := strings.Cut(platform, "_")
	files := "http://" + req.Host + "/files/" + version + "/"
	type key struct {
		KeyID      string `json:"key_id"`
		ASCIIArmor string `json:"ascii_armor"`
	}
	writeJSON(w, map[string]any{
		"protocols":             []string{"6.0"},
		"os":                    osName,
		"arch":                  arch,
		"filename":              a.filename,
		"download_url":          files + a.filename,
		"shasums_url":           files + p.sums,
		"shasums_signature_url": files + p.sums + ".sig",
		"shasum":                a.shasum,
		"signing_keys": map[string]any{
			"gpg_public_keys": []key{{KeyID: p.KeyID, ASCIIArmor: p.KeyArmor}},
		},
	})
}

// serveFile serves {version}/{name}: an archive listed in SHA256SUMS, or
// SHA256SUMS and its signature. Nothing else in the release's folder is
// reachable.
func (r *Registry) serveFile(w http.ResponseWriter, req *http.Request, rest string) {
	version, name, _ := strings.Cut(rest, "/")
	p, ok := r.version(version)
	if ok {
		ok = name == p.sums || name == p.sums+".sig"
		for _, a := range p.archives {
			ok = ok || name == a.filename
		}
	}
	if !ok {
		http.NotFound(w, req)
		return
	}
	http.ServeFile(w, req, filepath.Join(p.Dir, name))
}

// version is a published release, by its version.
func (r *Registry) version(v string) (*published, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.versions[v]
	return p, ok
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
