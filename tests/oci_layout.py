"""OCI image layouts written with hashlib and json: the blobs, a manifest,
index.json and oci-layout, for the tests and benchmarks of `vigil image`
(no pytest here: bench/ imports it too)."""
import hashlib
import json
import os


def blob(d, data):
    h = hashlib.sha256(data).hexdigest()
    with open(os.path.join(d, "blobs", "sha256", h), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + h, "size": len(data)}


def oci_of_blobs(d, datas, gz=False, corrupt=None):
    """An OCI layout in d of these layers' bytes (tar, or gzip with gz)."""
    os.makedirs(os.path.join(d, "blobs", "sha256"))
    descs = []
    for i, data in enumerate(datas):
        desc = blob(d, data)
        desc["mediaType"] = "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if gz else "")
        if i == corrupt:
            path = os.path.join(d, "blobs", "sha256", desc["digest"][7:])
            with open(path, "r+b") as f:
                f.seek(len(data) - 1)
                f.write(bytes([data[-1] ^ 1]))
        descs.append(desc)
    man = blob(d, json.dumps({"schemaVersion": 2, "config": blob(d, b"{}"),
                              "layers": descs}).encode())
    man["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [man]}, f)
    with open(os.path.join(d, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion": "1.0.0"}')
    return d
