// khook-image assembles khook's OCI image from directories, without a container runtime, and
// unpacks an image the way a runtime would (to test it): go-containerregistry does the OCI part.
//
//	khook-image build  -tag REF [-layer DIR]... [-chown PATH=UID:GID]... [-entrypoint P] [-user U]
//	                   [-workdir D] [-env K=V]... [-label K=V]...      push; prints the result as JSON
//	khook-image export -tag REF -dir DIR                                pull, unpack the flattened
//	                                                                    root filesystem; prints the config
//
// Layers are reproducible: entries sorted, every mtime the epoch, owned by root unless -chown
// names the path. Registry credentials come from KHOOK_IMAGE_USERNAME / KHOOK_IMAGE_PASSWORD
// (never argv); -plain-http talks HTTP to the registry (a loopback test registry).
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "khook-image: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: khook-image build|export [flags]")
	}
	switch os.Args[1] {
	case "build":
		build(os.Args[2:])
	case "export":
		export(os.Args[2:])
	default:
		fail("unknown command %q (build, export)", os.Args[1])
	}
}

func options(plainHTTP bool) ([]name.Option, []remote.Option) {
	var nameOpts []name.Option
	if plainHTTP {
		nameOpts = append(nameOpts, name.Insecure)
	}
	auth := authn.Anonymous
	if u := os.Getenv("KHOOK_IMAGE_USERNAME"); u != "" {
		auth = &authn.Basic{Username: u, Password: os.Getenv("KHOOK_IMAGE_PASSWORD")}
	}
	return nameOpts, []remote.Option{remote.WithAuth(auth)}
}

type owner struct{ uid, gid int }

func parseOwners(specs []string) map[string]owner {
	out := map[string]owner{}
	for _, s := range specs {
		p, ids, ok := strings.Cut(s, "=")
		u, g, ok2 := strings.Cut(ids, ":")
		uid, err1 := strconv.Atoi(u)
		gid, err2 := strconv.Atoi(g)
		if !ok || !ok2 || err1 != nil || err2 != nil {
			fail("-chown %q: want PATH=UID:GID", s)
		}
		out[strings.Trim(p, "/")] = owner{uid, gid}
	}
	return out
}

// layerTar writes dir's tree as a tar: sorted, epoch mtimes, root-owned unless owners names it.
func layerTar(dir string, owners map[string]owner) []byte {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		fail("reading layer %s: %v", dir, err)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil {
			fail("%v", err)
		}
		rel, _ := filepath.Rel(dir, p)
		link := ""
		if info.Mode()&os.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				fail("%v", err)
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			fail("%v", err)
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		hdr.ModTime = time.Unix(0, 0)
		hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
		hdr.Uname, hdr.Gname = "", ""
		hdr.Uid, hdr.Gid = 0, 0
		if o, ok := owners[filepath.ToSlash(rel)]; ok {
			hdr.Uid, hdr.Gid = o.uid, o.gid
		}
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			fail("%v", err)
		}
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				fail("%v", err)
			}
			if _, err := io.Copy(tw, f); err != nil {
				fail("%v", err)
			}
			f.Close()
		}
	}
	if err := tw.Close(); err != nil {
		fail("%v", err)
	}
	return buf.Bytes()
}

func build(args []string) {
	fl := flag.NewFlagSet("build", flag.ExitOnError)
	tag := fl.String("tag", "", "image reference to push")
	plainHTTP := fl.Bool("plain-http", false, "talk HTTP to the registry")
	entrypoint := fl.String("entrypoint", "", "the entrypoint (one path)")
	user := fl.String("user", "", "UID:GID the entrypoint runs as")
	workdir := fl.String("workdir", "", "working directory")
	var layers, chowns, envs, labels list
	fl.Var(&layers, "layer", "a directory that becomes one layer (repeatable, in order)")
	fl.Var(&chowns, "chown", "PATH=UID:GID inside a layer (repeatable)")
	fl.Var(&envs, "env", "K=V (repeatable)")
	fl.Var(&labels, "label", "K=V (repeatable)")
	_ = fl.Parse(args)
	if *tag == "" || len(layers) == 0 {
		fail("build needs -tag and at least one -layer")
	}
	owners := parseOwners(chowns)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	type layerReport struct {
		Dir    string `json:"dir"`
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	}
	var reports []layerReport
	for _, dir := range layers {
		data := layerTar(dir, owners)
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			fail("layer %s: %v", dir, err)
		}
		digest, _ := layer.Digest()
		size, _ := layer.Size()
		reports = append(reports, layerReport{dir, digest.String(), size})
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			fail("%v", err)
		}
	}
	cfgFile, err := img.ConfigFile()
	if err != nil {
		fail("%v", err)
	}
	cfg := cfgFile.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	if *entrypoint != "" {
		cfg.Config.Entrypoint = []string{*entrypoint}
	}
	cfg.Config.User, cfg.Config.WorkingDir, cfg.Config.Env = *user, *workdir, envs
	cfg.Config.Labels = map[string]string{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		cfg.Config.Labels[k] = v
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		fail("%v", err)
	}
	nameOpts, remoteOpts := options(*plainHTTP)
	ref, err := name.ParseReference(*tag, nameOpts...)
	if err != nil {
		fail("%v", err)
	}
	if err := remote.Write(ref, img, remoteOpts...); err != nil {
		fail("pushing %s: %v", ref, err)
	}
	digest, _ := img.Digest()
	manifest, _ := img.RawManifest()
	var total int64
	for _, r := range reports {
		total += r.Size
	}
	out, _ := json.MarshalIndent(map[string]any{"reference": ref.String(), "digest": digest.String(), "manifestSize": len(manifest), "compressedSize": total, "layers": reports}, "", "  ")
	fmt.Println(string(out))
}

func export(args []string) {
	fl := flag.NewFlagSet("export", flag.ExitOnError)
	tag := fl.String("tag", "", "image reference to pull")
	dir := fl.String("dir", "", "where to unpack the root filesystem")
	plainHTTP := fl.Bool("plain-http", false, "talk HTTP to the registry")
	_ = fl.Parse(args)
	if *tag == "" || *dir == "" {
		fail("export needs -tag and -dir")
	}
	nameOpts, remoteOpts := options(*plainHTTP)
	ref, err := name.ParseReference(*tag, nameOpts...)
	if err != nil {
		fail("%v", err)
	}
	img, err := remote.Image(ref, remoteOpts...)
	if err != nil {
		fail("pulling %s: %v", ref, err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := untar(rc, *dir); err != nil {
		fail("unpacking %s: %v", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		fail("%v", err)
	}
	digest, _ := img.Digest()
	out, _ := json.MarshalIndent(map[string]any{"digest": digest.String(), "config": cfg.Config}, "", "  ")
	fmt.Println(string(out))
}

// untar unpacks a flattened image into dir: modes and owners as recorded, no path outside dir.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.Clean("/"+hdr.Name))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("entry %q leaves the root", hdr.Name)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(hdr.Mode & 0o7777)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, mode); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			f.Close()
		case tar.TypeSymlink:
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			if err := os.Link(filepath.Join(dir, filepath.Clean("/"+hdr.Linkname)), target); err != nil {
				return err
			}
		default:
			continue
		}
		if hdr.Typeflag != tar.TypeSymlink {
			// Ownership as recorded (a root caller); chmod again: the umask trimmed the mode above.
			_ = os.Lchown(target, hdr.Uid, hdr.Gid)
			if err := os.Chmod(target, hdr.FileInfo().Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky)); err != nil {
				return err
			}
		} else {
			_ = os.Lchown(target, hdr.Uid, hdr.Gid)
		}
	}
}
