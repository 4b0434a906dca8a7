// Package releasetest tests the release workflow's own checks:
// scripts/check-signing-key.sh, run before the build, and
// scripts/verify-release.sh, run on the draft's assets before publishing,
// fed keys and releases made here with gpg. The rehearsal runs both on a
// real release (internal/e2e's install tests, make release-check).
package releasetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	checkKeyScript = "../../scripts/check-signing-key.sh"
	verifyScript   = "../../scripts/verify-release.sh"
)

// keyring is a GnuPG home of its own for one test.
type keyring struct {
	t    *testing.T
	home string
}

func newKeyring(t *testing.T) *keyring {
	t.Helper()
	if _, err := exec.LookPath("gpg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no gpg on PATH: the release is signed and checked with it (apt-get install gnupg)")
		}
		t.Skip("no gpg on PATH")
	}
	home := t.TempDir()
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run() })
	return &keyring{t: t, home: home}
}

func (k *keyring) gpg(args ...string) string {
	k.t.Helper()
	cmd := exec.Command("gpg", append([]string{"--batch", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
	cmd.Env = append(os.Environ(), "GNUPGHOME="+k.home)
	out, err := cmd.Output()
	if err != nil {
		k.t.Fatalf("gpg %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// newKey makes a signing key (algo: rsa2048, ed25519, ...; expire: never,
// 10d, ...), at the faked time given unless it is empty, and returns its
// fingerprint.
func (k *keyring) newKey(name, algo, expire, at string) string {
	k.t.Helper()
	args := []string{"--quick-generate-key", name + " <" + name + "@invalid>", algo, "sign", expire}
	if at != "" {
		args = append([]string{"--faked-system-time", at}, args...)
	}
	k.gpg(args...)
	for line := range strings.Lines(k.gpg("--with-colons", "--list-secret-keys", name+"@invalid")) {
		if f := strings.Split(line, ":"); f[0] == "fpr" {
			return f[9]
		}
	}
	k.t.Fatalf("no fingerprint for the key %s", name)
	return ""
}

// export writes the ASCII-armored public keys named to a file, returning it.
func (k *keyring) export(fprs ...string) string {
	k.t.Helper()
	name := filepath.Join(k.t.TempDir(), "signing-key.asc")
	writeFile(k.t, name, k.gpg(append([]string{"--armor", "--export"}, fprs...)...))
	return name
}

// runScript runs a release script with the keyring and extra environment.
func (k *keyring) runScript(env []string, script string, args ...string) (string, error) {
	cmd := exec.Command(script, args...)
	cmd.Env = append(append(os.Environ(), "GNUPGHOME="+k.home), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCheckSigningKey_refusesWhatARegistryOrCLIWouldRefuse(t *testing.T) {
	k := newKeyring(t)
	good := k.newKey("good", "rsa2048", "never", "")
	ecc := k.newKey("ecc", "ed25519", "never", "")
	expired := k.newKey("expired", "rsa2048", "1y", "20200101T000000")
	soon := k.newKey("soon", "rsa2048", "10d", "")
	committed := k.export(good, ecc, expired, soon)

	for _, tc := range []struct {
		name, fpr, public string
		args              []string
		want              string // "" for a key accepted
	}{
		{"RSA, no expiry", good, committed, nil, ""},
		{"ECC", ecc, committed, nil, "is not RSA or DSA (OpenPGP algorithm 22)"},
		{"expired", expired, committed, nil, "expired on 2020-12-31"},
		{"expires within 30 days", soon, committed, nil, "within 30 days"},
		{"expires within 30 days, held to none", soon, committed, []string{"--min-days", "0"}, ""},
		{"not the committed key", good, k.export(soon), nil, "key " + good + " is not in"},
		{"no committed key", good, filepath.Join(t.TempDir(), "signing-key.asc"), nil, "no public key is committed at"},
		{"no key with that fingerprint", strings.Repeat("AB", 20), committed, nil, "no secret key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := k.runScript([]string{"GPG_FINGERPRINT=" + tc.fpr}, checkKeyScript, append(tc.args, tc.public)...)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused a good key: %v\n%s", err, out)
			case tc.want != "" && (err == nil || !strings.Contains(out, "signing key refused: ") || !strings.Contains(out, tc.want)):
				t.Errorf("err = %v, want a refusal saying %q:\n%s", err, tc.want, out)
			}
		})
	}
}

// A signing subkey is checked with its primary key, whose expiry bounds it.
func TestCheckSigningKey_checksASubkeyAndItsPrimary(t *testing.T) {
	k := newKeyring(t)
	primary := k.newKey("primary", "ed25519", "never", "")
	k.gpg("--quick-add-key", primary, "rsa2048", "sign", "never")
	var sub string
	for line := range strings.Lines(k.gpg("--with-colons", "--list-secret-keys", primary)) {
		if f := strings.Split(line, ":"); f[0] == "fpr" && f[9] != primary {
			sub = f[9]
		}
	}
	out, err := k.runScript([]string{"GPG_FINGERPRINT=" + sub}, checkKeyScript, k.export(primary))
	if err == nil || !strings.Contains(out, "primary key "+primary+" is not RSA or DSA") {
		t.Errorf("an RSA subkey of an ECC primary: err = %v, want the primary refused:\n%s", err, out)
	}
}

// release writes a release of version 0.1.0 to a new folder as a draft's
// assets come back: two zips, the manifest, SHA256SUMS and its signature by
// fpr; then change alters it before signing (sums) or after.
func (k *keyring) release(fpr string, change func(dir string)) string {
	k.t.Helper()
	dir := k.t.TempDir()
	prefix := "terraform-provider-browserprofile_0.1.0"
	var sums strings.Builder
	for _, name := range []string{prefix + "_linux_amd64.zip", prefix + "_darwin_arm64.zip", prefix + "_manifest.json"} {
		content := "contents of " + name
		writeFile(k.t, filepath.Join(dir, name), content)
		sum := sha256.Sum256([]byte(content))
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	sumsFile := filepath.Join(dir, prefix+"_SHA256SUMS")
	writeFile(k.t, sumsFile, sums.String())
	k.gpg("--local-user", fpr, "--output", sumsFile+".sig", "--detach-sign", sumsFile)
	if change != nil {
		change(dir)
	}
	return dir
}

func TestVerifyRelease_publishesOnlyWhatVerifies(t *testing.T) {
	k := newKeyring(t)
	key := k.newKey("release", "ed25519", "never", "")
	other := k.newKey("other", "ed25519", "never", "")
	public := k.export(key)
	prefix := "terraform-provider-browserprofile_0.1.0"
	appendTo := func(name, text string) func(dir string) {
		return func(dir string) {
			f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(text); err != nil {
				t.Fatal(err)
			}
		}
	}

	for _, tc := range []struct {
		name string
		dir  string
		want string // "" for a release that verifies
	}{
		{"as signed", k.release(key, nil), ""},
		{"signed by another key", k.release(other, nil), "is not a good signature of " + prefix + "_SHA256SUMS by the key in"},
		{"SHA256SUMS changed after signing", k.release(key, appendTo(prefix+"_SHA256SUMS", "00  "+prefix+"_SHA256SUMS.sig\n")), "is not a good signature"},
		{"an archive changed", k.release(key, appendTo(prefix+"_linux_amd64.zip", "\n")), prefix + "_linux_amd64.zip does not have the hash"},
		{"an archive missing", k.release(key, func(dir string) {
			os.Remove(filepath.Join(dir, prefix+"_darwin_arm64.zip"))
		}), "lists " + prefix + "_darwin_arm64.zip, which the release does not hold"},
		{"an archive not listed", k.release(key, func(dir string) {
			writeFile(t, filepath.Join(dir, prefix+"_windows_amd64.zip"), "unlisted")
		}), "does not list " + prefix + "_windows_amd64.zip"},
		{"another file", k.release(key, func(dir string) {
			writeFile(t, filepath.Join(dir, "checksums.txt"), "other")
		}), "holds checksums.txt, which is neither"},
		{"no signature", k.release(key, func(dir string) {
			os.Remove(filepath.Join(dir, prefix+"_SHA256SUMS.sig"))
		}), "has no " + prefix + "_SHA256SUMS.sig"},
		// gpg verifies an armoured signature, but the registry takes a
		// binary one only.
		{"an armoured signature", k.release(key, func(dir string) {
			sums := filepath.Join(dir, prefix+"_SHA256SUMS")
			os.Remove(sums + ".sig")
			k.gpg("--local-user", key, "--armor", "--output", sums+".sig", "--detach-sign", sums)
		}), prefix + "_SHA256SUMS.sig is not a binary OpenPGP signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := k.runScript(nil, verifyScript, "0.1.0", tc.dir, public)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused a good release: %v\n%s", err, out)
			case tc.want != "" && (err == nil || !strings.Contains(out, "release 0.1.0 refused: ") || !strings.Contains(out, tc.want)):
				t.Errorf("err = %v, want a refusal saying %q:\n%s", err, tc.want, out)
			}
		})
	}
}

// A tag that is not a semantic version is refused before anything is read.
func TestVerifyRelease_refusesATagThatIsNotASemanticVersion(t *testing.T) {
	k := newKeyring(t)
	key := k.newKey("release", "rsa2048", "never", "")
	public := k.export(key)
	dir := k.release(key, nil)
	for _, version := range []string{"0.1", "v0.1.0", "0.1.0.1", "01.1.0", "0.1.0-", "latest"} {
		out, err := k.runScript(nil, verifyScript, version, dir, public)
		if err == nil || !strings.Contains(out, "is not a semantic version") {
			t.Errorf("version %q: err = %v, want it refused as not a semantic version:\n%s", version, err, out)
		}
	}
	for _, version := range []string{"1.2.3-rc.1", "1.2.3+build.5"} {
		out, err := k.runScript(nil, verifyScript, version, dir, public)
		if strings.Contains(out, "is not a semantic version") {
			t.Errorf("version %q: refused as not a semantic version (err = %v):\n%s", version, err, out)
		}
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
