"""A small Python re-implementation of MediaPipe's Face Landmarker pipeline
(mediapipe.tasks.vision.FaceLandmarker, CPU path), built from the MediaPipe
sources, using LiteRT for the three .tflite models and OpenCV for the
ImageToTensor warp (MediaPipe itself uses cv::warpPerspective on CPU).

    face detector (short range, 128x128)  ->  ROI  ->  478 landmarks (256x256)
    -> [VIDEO mode, num_faces == 1: one-euro smoothing]
    -> 52 blendshapes (146 landmarks) + facial transformation matrix.

Usage:
    fl = FaceLandmarkerPy(models_dir, running_mode="VIDEO", num_faces=1,
                          projection="v2")   # "v2": mediapipe >= 0.10.20
                                             # "v1": mediapipe <= 0.10.18
    faces = fl.process(rgb_uint8_hxwx3, timestamp_ms)
    # -> list of dict(landmarks=(478,3) f32, blendshapes=(52,) f32,
    #                 matrix=(4,4) f32, presence=float, roi=(xc,yc,w,h,rot))
    fl.debug  # per-call intermediates (detections, rois, raw landmarks ...)

Source files each step follows are named in the comments (paths inside the
google-ai-edge/mediapipe repository).
"""
import math
import os

import cv2
import numpy as np

try:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError:  # pragma: no cover
    from tflite_runtime.interpreter import Interpreter, OpResolverType


def make_interpreter(path, num_threads=1, reference_kernels=False):
    """LiteRT interpreter. reference_kernels=True builds it WITHOUT the default
    delegates (no XNNPACK): the builtin reference/optimized kernels that our
    float engine is checked against. False = LiteRT's default (XNNPACK), which
    is what MediaPipe itself uses on desktop Linux."""
    kw = {}
    if reference_kernels:
        kw["experimental_op_resolver_type"] = \
            OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_path=str(path), num_threads=num_threads, **kw)
    it.allocate_tensors()
    return it

F32 = np.float32

# mediapipe/tasks/cc/vision/face_landmarker/face_blendshapes_graph.cc
BLENDSHAPE_LANDMARKS = np.array([
    0, 1, 4, 5, 6, 7, 8, 10, 13, 14, 17, 21, 33, 37, 39,
    40, 46, 52, 53, 54, 55, 58, 61, 63, 65, 66, 67, 70, 78, 80,
    81, 82, 84, 87, 88, 91, 93, 95, 103, 105, 107, 109, 127, 132, 133,
    136, 144, 145, 146, 148, 149, 150, 152, 153, 154, 155, 157, 158, 159, 160,
    161, 162, 163, 168, 172, 173, 176, 178, 181, 185, 191, 195, 197, 234, 246,
    249, 251, 263, 267, 269, 270, 276, 282, 283, 284, 285, 288, 291, 293, 295,
    296, 297, 300, 308, 310, 311, 312, 314, 317, 318, 321, 323, 324, 332, 334,
    336, 338, 356, 361, 362, 365, 373, 374, 375, 377, 378, 379, 380, 381, 382,
    384, 385, 386, 387, 388, 389, 390, 397, 398, 400, 402, 405, 409, 415, 454,
    466, 468, 469, 470, 471, 472, 473, 474, 475, 476, 477], dtype=np.int64)

BLENDSHAPE_NAMES = [
    "_neutral", "browDownLeft", "browDownRight", "browInnerUp",
    "browOuterUpLeft", "browOuterUpRight", "cheekPuff", "cheekSquintLeft",
    "cheekSquintRight", "eyeBlinkLeft", "eyeBlinkRight", "eyeLookDownLeft",
    "eyeLookDownRight", "eyeLookInLeft", "eyeLookInRight", "eyeLookOutLeft",
    "eyeLookOutRight", "eyeLookUpLeft", "eyeLookUpRight", "eyeSquintLeft",
    "eyeSquintRight", "eyeWideLeft", "eyeWideRight", "jawForward", "jawLeft",
    "jawOpen", "jawRight", "mouthClose", "mouthDimpleLeft", "mouthDimpleRight",
    "mouthFrownLeft", "mouthFrownRight", "mouthFunnel", "mouthLeft",
    "mouthLowerDownLeft", "mouthLowerDownRight", "mouthPressLeft",
    "mouthPressRight", "mouthPucker", "mouthRight", "mouthRollLower",
    "mouthRollUpper", "mouthShrugLower", "mouthShrugUpper", "mouthSmileLeft",
    "mouthSmileRight", "mouthStretchLeft", "mouthStretchRight",
    "mouthUpperUpLeft", "mouthUpperUpRight", "noseSneerLeft", "noseSneerRight"]


def normalize_radians(a):
    # detections_to_rects_calculator.h / rect_transformation_calculator.cc
    return a - 2 * math.pi * math.floor((a - (-math.pi)) / (2 * math.pi))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))


# ---------------------------------------------------------------- anchors
def ssd_anchors():
    """mediapipe/calculators/tflite/ssd_anchors_calculator.cc with the options
    of face_detector_graph.cc (short range): num_layers 4, min_scale
    0.1484375, max_scale 0.75, 128x128, offsets 0.5, strides [8,16,16,16],
    aspect_ratios [1.0], interpolated_scale_aspect_ratio 1.0,
    fixed_anchor_size true  ->  896 anchors, every w = h = 1."""
    strides = [8, 16, 16, 16]
    anchors = []
    layer = 0
    while layer < len(strides):
        n_per_cell = 0
        last = layer
        while last < len(strides) and strides[last] == strides[layer]:
            n_per_cell += 2  # aspect ratio 1.0 + interpolated scale anchor
            last += 1
        fm = int(math.ceil(128 / strides[layer]))
        for y in range(fm):
            for x in range(fm):
                for _ in range(n_per_cell):
                    anchors.append(((x + 0.5) / fm, (y + 0.5) / fm))
        layer = last
    a = np.array(anchors, dtype=F32)
    assert a.shape == (896, 2)
    return a


# ---------------------------------------------------------------- ImageToTensor
def roi_to_pixels(rect, w, h):
    """image_to_tensor_utils.cc GetRoi: NormalizedRect -> RotatedRect (px)."""
    xc, yc, rw, rh, rot = rect
    return [F32(xc) * F32(w), F32(yc) * F32(h), F32(rw) * F32(w),
            F32(rh) * F32(h), F32(rot)]


def pad_roi(roi, tw, th):
    """image_to_tensor_utils.cc PadRoi (keep_aspect_ratio=true)."""
    tensor_ar = F32(th) / F32(tw)
    roi_ar = F32(roi[3]) / F32(roi[2])
    roi = list(roi)
    if tensor_ar > roi_ar:
        new_w, new_h = roi[2], F32(roi[2]) * tensor_ar
        vpad = (F32(1) - roi_ar / tensor_ar) / F32(2)
        hpad = F32(0)
    else:
        new_w, new_h = F32(roi[3]) / tensor_ar, roi[3]
        hpad = (F32(1) - tensor_ar / roi_ar) / F32(2)
        vpad = F32(0)
    roi[2], roi[3] = new_w, new_h
    return roi, (hpad, vpad, hpad, vpad)


def subrect_matrix(roi, w, h):
    """image_to_tensor_utils.cc GetRotatedSubRectToRectTransformMatrix
    (flip=false); row-major 4x4 mapping normalized ROI coords -> normalized
    image coords."""
    a, b = F32(roi[2]), F32(roi[3])
    c, d = F32(math.cos(roi[4])), F32(math.sin(roi[4]))
    e, f = F32(roi[0]), F32(roi[1])
    g, hh = F32(1.0) / F32(w), F32(1.0) / F32(h)
    m = np.zeros(16, F32)
    m[0] = a * c * g
    m[1] = -b * d * g
    m[3] = (F32(-0.5) * a * c + F32(0.5) * b * d + e) * g
    m[4] = a * d * hh
    m[5] = b * c * hh
    m[7] = (F32(-0.5) * b * c - F32(0.5) * a * d + f) * hh
    m[10] = a * g
    m[15] = 1
    return m


def warp_roi(img, roi, tw, th, border):
    """image_to_tensor_converter_opencv.cc: cv::boxPoints of the rotated ROI
    -> getPerspectiveTransform to the tensor corners -> warpPerspective
    (INTER_LINEAR, uint8 output) ."""
    # roi.rotation * 180.f / M_PI: float product, double division
    ang = float(np.float32(np.float32(roi[4]) * np.float32(180.0))) / math.pi
    rr = ((float(roi[0]), float(roi[1])), (float(roi[2]), float(roi[3])), ang)
    src = cv2.boxPoints(rr).astype(np.float32)
    dst = np.array([[0, th], [0, 0], [tw, 0], [tw, th]], np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(img, M, (tw, th), flags=cv2.INTER_LINEAR,
                               borderMode=border, borderValue=0)


# ---------------------------------------------------------------- geometry
class GeometryPipeline:
    """tasks/cc/vision/face_geometry/libs/geometry_pipeline.cc +
    procrustes_solver.cc, environment from face_geometry_from_landmarks_graph.cc
    (TOP_LEFT_CORNER origin, vertical FOV 63 deg, near 1, far 10000)."""

    def __init__(self, metadata_npz=None, binarypb=None):
        if metadata_npz is not None:
            d = np.load(metadata_npz)
            verts = d["canonical_vertices"]
            ids, ws = d["basis_ids"], d["basis_weights"]
        else:
            verts, ids, ws = parse_geometry_metadata(binarypb)
        self.canon = verts[:, :3].T.astype(F32)  # 3 x 468
        self.weights = np.zeros(self.canon.shape[1], F32)
        self.weights[ids] = ws
        self.fov, self.near, self.far = 63.0, 1.0, 10000.0

    def _solve(self, src, tgt):
        sw = np.sqrt(self.weights).astype(F32)
        ws_ = src * sw
        wt = tgt * sw
        total = F32((sw * sw).sum())
        twice = ws_ * sw
        com = twice.sum(1) / total
        cws = ws_ - np.outer(com, sw)
        design = (wt @ cws.T).astype(np.float64)
        u, s, vt = np.linalg.svd(design)
        post, pre = u.copy(), vt
        if np.linalg.det(post) * np.linalg.det(pre) < 0:
            post[:, 2] *= -1
        rot = (post @ pre).astype(F32)
        num = ((rot @ cws) * wt).sum()
        den = (cws * ws_).sum()
        scale = F32(num / den)
        rs = scale * rot
        diffs = (wt - rs @ ws_) * sw
        t = diffs.sum(1) / total
        m = np.eye(4, dtype=F32)
        m[:3, :3] = rs
        m[:3, 3] = t
        return m

    def pose(self, lm, w, h):
        lm = np.asarray(lm, F32)[:468].T.copy()  # 3 x 468 (x,y,z normalized)
        hn = F32(2.0 * self.near * math.tan(0.5 * math.radians(self.fov)))
        wn = F32(w) * hn / F32(h)
        left, bottom = -0.5 * wn, -0.5 * hn
        # ProjectXY (TOP_LEFT origin flips y)
        s = lm.copy()
        s[1] = 1.0 - s[1]
        s = s * np.array([[wn], [hn], [wn]], F32)
        s[0] += left
        s[1] += bottom
        depth_offset = s[2].mean()
        inter = s.copy()
        inter[2] *= -1
        scale1 = np.linalg.norm(self._solve(self.canon, inter)[:3, 0])
        inter = s.copy()
        inter[2] = (inter[2] - depth_offset + self.near) / scale1
        inter[0] = inter[0] * inter[2] / self.near
        inter[1] = inter[1] * inter[2] / self.near
        inter[2] *= -1
        scale2 = np.linalg.norm(self._solve(self.canon, inter)[:3, 0])
        total = F32(scale1 * scale2)
        m = s.copy()
        m[2] = (m[2] - depth_offset + self.near) / total
        m[0] = m[0] * m[2] / self.near
        m[1] = m[1] * m[2] / self.near
        m[2] *= -1
        return self._solve(self.canon, m)


def parse_geometry_metadata(path):
    """Minimal protobuf reader for geometry_pipeline_metadata_landmarks.binarypb
    (GeometryPipelineMetadata: 1 canonical_mesh{3 vertex_buffer packed float,
    4 index_buffer}, 2 procrustes_landmark_basis{1 landmark_id, 2 weight},
    3 input_source)."""
    buf = open(path, "rb").read()

    def varint(b, i):
        r = s = 0
        while True:
            c = b[i]
            i += 1
            r |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                return r, i

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            fn, wt = key >> 3, key & 7
            if wt == 0:
                v, i = varint(b, i)
            elif wt == 2:
                ln, i = varint(b, i)
                v = b[i:i + ln]
                i += ln
            elif wt == 5:
                v = b[i:i + 4]
                i += 4
            elif wt == 1:
                v = b[i:i + 8]
                i += 8
            else:
                raise ValueError(wt)
            yield fn, wt, v

    verts, ids, ws = [], [], []
    for fn, wt, v in fields(buf):
        if fn == 1:
            for f2, w2, v2 in fields(v):
                if f2 == 3:
                    if w2 == 2:
                        verts.extend(np.frombuffer(v2, "<f4").tolist())
                    else:
                        verts.append(np.frombuffer(v2, "<f4")[0])
        elif fn == 2:
            lid, wgt = 0, 0.0
            for f2, w2, v2 in fields(v):
                if f2 == 1:
                    lid = v2
                elif f2 == 2:
                    wgt = float(np.frombuffer(v2, "<f4")[0])
            ids.append(lid)
            ws.append(wgt)
    return (np.array(verts, F32).reshape(-1, 5), np.array(ids, np.int64),
            np.array(ws, F32))


# ---------------------------------------------------------------- one euro
class _LowPass:
    """mediapipe/util/filtering/low_pass_filter.cc (float state)."""

    def __init__(self, alpha):
        self.alpha = F32(alpha)
        self.init = False
        self.raw = F32(0)
        self.stored = F32(0)

    def apply(self, value, alpha):
        a = F32(alpha)
        if 0.0 <= a <= 1.0:  # SetAlpha ignores out-of-range alphas
            self.alpha = a
        if self.init:
            res = F32(float(self.alpha) * float(value) +
                      (1.0 - float(self.alpha)) * float(self.stored))
        else:
            res = F32(value)
            self.init = True
        self.raw = F32(value)
        self.stored = res
        return res


class OneEuroLandmarks:
    """mediapipe/util/filtering/one_euro_filter.cc + calculators/util/
    landmarks_smoothing_calculator{,_utils}.cc, vectorised over the
    478 x 3 values. Options from face_landmarks_detector_graph.cc:
    frequency 30 (proto default), min_cutoff 0.05, beta 80, derivate_cutoff 1,
    min_allowed_object_scale 1e-6, value scaling on."""
    INT64_MIN = -(1 << 63)

    def __init__(self, min_cutoff=0.05, beta=80.0, dcutoff=1.0, freq=30.0):
        self.p = (min_cutoff, beta, dcutoff, freq)
        self.reset()

    def reset(self):
        self.filters = None

    @staticmethod
    def _alpha(freq, cutoff):
        te = 1.0 / freq
        tau = 1.0 / (2 * math.pi * cutoff)
        return 1.0 / (1.0 + tau / te)

    def apply(self, lm_px, t_us):
        """lm_px: (N,3) landmarks in pixels (x*W, y*H, z*W)."""
        min_cutoff, beta, dcutoff, freq = self.p
        n = lm_px.shape[0]
        xs, ys = lm_px[:, 0], lm_px[:, 1]
        obj = F32((F32(xs.max() - xs.min()) + F32(ys.max() - ys.min())) / F32(2))
        if obj < 1e-6:
            return lm_px.copy()
        vscale = float(F32(1.0) / obj)
        if self.filters is None:
            self.filters = dict(
                freq=np.full(n * 3, freq, np.float64),
                last=np.full(n * 3, self.INT64_MIN, dtype=object),
                x_init=False, x_raw=np.zeros(n * 3, F32),
                x_stored=np.zeros(n * 3, F32),
                x_alpha=np.full(n * 3, F32(self._alpha(freq, min_cutoff)), F32),
                d_init=False, d_stored=np.zeros(n * 3, F32),
                d_alpha=np.full(n * 3, F32(self._alpha(freq, dcutoff)), F32))
        st = self.filters
        v = lm_px.reshape(-1).astype(F32)
        t_ns = int(t_us) * 1000
        last = int(st["last"][0])
        if last >= t_ns:
            return lm_px.copy()
        if last != 0 and t_ns != 0:
            dt = t_ns - last
            # int64 wrap-around exactly as in C++ (first call after reset)
            dt = (dt + (1 << 63)) % (1 << 64) - (1 << 63)
            st["freq"][:] = 1.0 / (dt * 1e-9)
        st["last"][:] = t_ns
        fr = st["freq"][0]
        if st["x_init"]:
            dval = (v.astype(np.float64) - st["x_raw"]) * vscale * fr
        else:
            dval = np.zeros(n * 3)
        # dx low-pass
        da = F32(self._alpha(fr, dcutoff))
        if 0.0 <= da <= 1.0:
            st["d_alpha"][:] = da
        if st["d_init"]:
            ed = (st["d_alpha"].astype(np.float64) * dval.astype(F32) +
                  (1.0 - st["d_alpha"].astype(np.float64)) * st["d_stored"]).astype(F32)
        else:
            ed = dval.astype(F32)
            st["d_init"] = True
        st["d_stored"] = ed
        cutoff = min_cutoff + beta * np.abs(ed.astype(np.float64))
        te = 1.0 / fr
        tau = 1.0 / (2 * math.pi * cutoff)
        xa = (1.0 / (1.0 + tau / te)).astype(F32)
        ok = (xa >= 0) & (xa <= 1)
        st["x_alpha"] = np.where(ok, xa, st["x_alpha"])
        if st["x_init"]:
            out = (st["x_alpha"].astype(np.float64) * v +
                   (1.0 - st["x_alpha"].astype(np.float64)) * st["x_stored"]).astype(F32)
        else:
            out = v.copy()
            st["x_init"] = True
        st["x_raw"] = v
        st["x_stored"] = out
        return out.reshape(n, 3)


# ---------------------------------------------------------------- pipeline
class FaceLandmarkerPy:
    def __init__(self, models_dir, running_mode="VIDEO", num_faces=1,
                 min_face_detection_confidence=0.5,
                 min_face_presence_confidence=0.5,
                 min_tracking_confidence=0.5, projection="v2",
                 num_threads=1, smoothing=None, reference_kernels=False):
        def load(name):
            return make_interpreter(os.path.join(models_dir, name),
                                    num_threads, reference_kernels)
        self.det = load("face_detector.tflite")
        self.lmk = load("face_landmarks_detector.tflite")
        self.bsh = load("face_blendshapes.tflite")
        self.det_in = self.det.get_input_details()[0]["index"]
        self.det_out = [d["index"] for d in self.det.get_output_details()]
        self.lmk_in = self.lmk.get_input_details()[0]["index"]
        self.lmk_out = [d["index"] for d in self.lmk.get_output_details()]
        self.bsh_in = self.bsh.get_input_details()[0]["index"]
        self.bsh_out = self.bsh.get_output_details()[0]["index"]
        self.anchors = ssd_anchors()
        self.geom = GeometryPipeline(
            binarypb=os.path.join(models_dir,
                                  "geometry_pipeline_metadata_landmarks.binarypb"))
        self.video = running_mode.upper() != "IMAGE"
        self.num_faces = num_faces
        self.min_det = min_face_detection_confidence
        self.min_presence = min_face_presence_confidence
        self.min_track = min_tracking_confidence
        self.projection = projection
        if smoothing is None:
            smoothing = self.video and num_faces == 1
        self.smoother = OneEuroLandmarks() if smoothing else None
        self.prev_rects = None  # FACE_RECTS_NEXT_FRAME loop-back
        self.debug = {}

    # ---- face detector graph (tasks/cc/vision/face_detector/face_detector_graph.cc)
    @staticmethod
    def detector_input(img):
        """Letterboxed 128x128 detector tensor (HxWx3 float32 in [-1, 1]) and
        the padded ROI (pixels) it was sampled from."""
        h, w = img.shape[:2]
        roi, _ = pad_roi(roi_to_pixels((0.5, 0.5, 1.0, 1.0, 0.0), w, h), 128, 128)
        # GetRoi without a NORM_RECT uses the full image exactly:
        roi = [F32(0.5 * w), F32(0.5 * h)] + roi[2:4] + [F32(0)]
        patch = warp_roi(img, roi, 128, 128, cv2.BORDER_CONSTANT)
        x = patch.astype(F32) * F32(2.0 / 255.0) + F32(-1.0)
        return x, roi

    @staticmethod
    def landmark_input(img, rect):
        """256x256 ROI crop (HxWx3 float32 in [0, 1]) for a NormalizedRect."""
        h, w = img.shape[:2]
        roi = roi_to_pixels(rect, w, h)
        patch = warp_roi(img, roi, 256, 256, cv2.BORDER_REPLICATE)
        return patch.astype(F32) * F32(1.0 / 255.0)

    @staticmethod
    def blendshape_input(lm, w, h):
        """1x146x2 pixel landmarks fed to the blend-shape model."""
        pts = lm[BLENDSHAPE_LANDMARKS, :2] * np.array([w, h], F32)
        return pts[None].astype(F32)

    def detect(self, img):
        h, w = img.shape[:2]
        x, roi = self.detector_input(img)
        self.det.set_tensor(self.det_in, x[None])
        self.det.invoke()
        raw = self.det.get_tensor(self.det_out[0])[0]      # 896 x 16
        logit = self.det.get_tensor(self.det_out[1])[0, :, 0]
        dets = self.decode_detections(raw, logit)
        dets = weighted_nms(dets, 0.5)
        mat = subrect_matrix(roi, w, h)
        out = []
        for d in dets:
            out.append(project_detection(d, mat))
        out = out[: self.num_faces]
        rects = []
        for d in out:
            xmin, ymin, bw, bh = d["box"]
            kp = d["kp"]
            x0, y0 = kp[0][0] * w, kp[0][1] * h
            x1, y1 = kp[1][0] * w, kp[1][1] * h
            rot = normalize_radians(0.0 - math.atan2(-(y1 - y0), x1 - x0))
            rect = (xmin + bw / 2, ymin + bh / 2, bw, bh, rot)
            # RectTransformationCalculator scale 1.5 (no square_long, no shift)
            rects.append((rect[0], rect[1], rect[2] * 1.5, rect[3] * 1.5, rect[4]))
        self.debug["detections"] = out
        self.debug["detector_rects"] = rects
        self.debug["detector_tensor"] = x
        return rects

    def decode_detections(self, raw, logit):
        # tensors_to_detections_calculator.cc, reverse_output_order -> XYWH
        a = self.anchors
        s = F32(128.0)
        xc = raw[:, 0] / s + a[:, 0]
        yc = raw[:, 1] / s + a[:, 1]
        bw = raw[:, 2] / s
        bh = raw[:, 3] / s
        kx = raw[:, 4::2] / s + a[:, 0:1]
        ky = raw[:, 5::2] / s + a[:, 1:2]
        score = sigmoid(np.clip(logit, -100.0, 100.0).astype(F32)).astype(F32)
        dets = []
        for i in np.nonzero(score >= self.min_det)[0]:
            ymin, xmin = yc[i] - bh[i] / 2, xc[i] - bw[i] / 2
            ymax, xmax = yc[i] + bh[i] / 2, xc[i] + bw[i] / 2
            width, height = xmax - xmin, ymax - ymin
            if width < 0 or height < 0 or np.isnan(width) or np.isnan(height):
                continue
            dets.append(dict(score=float(score[i]), anchor=int(i),
                             box=(float(xmin), float(ymin), float(width), float(height)),
                             kp=[(float(kx[i, k]), float(ky[i, k])) for k in range(6)]))
        return dets

    # ---- single face landmarks (face_landmarks_detector_graph.cc)
    def landmarks(self, img, rect):
        h, w = img.shape[:2]
        x = self.landmark_input(img, rect)
        self.debug.setdefault("landmark_tensors", []).append(x)
        self.debug.setdefault("landmark_presence_all", [])
        self.lmk.set_tensor(self.lmk_in, x[None])
        self.lmk.invoke()
        raw = self.lmk.get_tensor(self.lmk_out[0]).reshape(478, 3)
        presence = float(sigmoid(np.float64(self.lmk.get_tensor(self.lmk_out[1]).reshape(-1)[0])))
        self.debug["landmark_presence_all"].append(presence)
        n = raw / F32(256.0)  # x/256, y/256, z/256 (normalize_z = 1)
        lm = self.project(n, rect, w, h)
        return lm, presence, raw

    def project(self, n, rect, w, h):
        xc, yc, rw, rh, rot = [F32(v) for v in rect]
        if self.projection == "v1":
            # landmark_projection_calculator.cc (mediapipe <= 0.10.18)
            x, y = n[:, 0] - F32(0.5), n[:, 1] - F32(0.5)
            c, s = F32(math.cos(rot)), F32(math.sin(rot))
            nx = (c * x - s * y) * rw + xc
            ny = (s * x + c * y) * rh + yc
            nz = n[:, 2] * rw
        else:
            # IMAGE_DIMENSIONS path (mediapipe >= 0.10.20)
            m = subrect_matrix(roi_to_pixels(rect, w, h), w, h)
            nx = n[:, 0] * m[0] + n[:, 1] * m[1] + m[3]
            ny = n[:, 0] * m[4] + n[:, 1] * m[5] + m[7]
            zs = F32(math.sqrt(float(m[0]) ** 2 + float(m[4]) ** 2))
            nz = n[:, 2] * zs
        return np.stack([nx, ny, nz], 1).astype(F32)

    @staticmethod
    def rect_from_landmarks(lm, w, h):
        # LandmarksToDetection -> DetectionsToRects(33 -> 263, target 0) ->
        # RectTransformation(scale 1.5, square_long)
        xmin = min(float(lm[:, 0].min()), 3.4e38)
        xmax = max(float(lm[:, 0].max()), 1.1754944e-38)
        ymin = min(float(lm[:, 1].min()), 3.4e38)
        ymax = max(float(lm[:, 1].max()), 1.1754944e-38)
        bw, bh = F32(xmax - xmin), F32(ymax - ymin)
        xc, yc = F32(xmin) + bw / 2, F32(ymin) + bh / 2
        x0, y0 = lm[33, 0] * w, lm[33, 1] * h
        x1, y1 = lm[263, 0] * w, lm[263, 1] * h
        rot = normalize_radians(0.0 - math.atan2(-(y1 - y0), x1 - x0))
        long_side = max(bw * w, bh * h)
        return (float(xc), float(yc), float(long_side / w * 1.5),
                float(long_side / h * 1.5), float(rot))

    def blendshapes(self, lm, w, h):
        pts = self.blendshape_input(lm, w, h)
        self.debug.setdefault("blendshape_inputs", []).append(pts)
        self.bsh.set_tensor(self.bsh_in, pts)
        self.bsh.invoke()
        return self.bsh.get_tensor(self.bsh_out).reshape(52).copy()

    # ---- face landmarker graph (face_landmarker_graph.cc)
    def process(self, img, timestamp_ms=0):
        assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
        h, w = img.shape[:2]
        self.debug = {}
        prev = self.prev_rects if self.video else None
        ran_detector = False
        if prev is not None and len(prev) >= self.num_faces:
            rects = associate([prev], self.min_track)
        else:
            det_rects = self.detect(img)
            ran_detector = True
            rects = associate([prev or [], det_rects], self.min_track)
        rects = rects[: self.num_faces]
        self.debug["ran_detector"] = ran_detector
        self.debug["rois"] = rects
        faces, next_rects = [], []
        for rect in rects:
            lm, presence, raw = self.landmarks(img, rect)
            if presence > self.min_presence:
                faces.append(dict(landmarks=lm, presence=presence, roi=rect,
                                  raw=raw))
                next_rects.append(self.rect_from_landmarks(lm, w, h))
        self.debug["presence"] = [f["presence"] for f in faces]
        self.prev_rects = next_rects
        if self.smoother is not None:
            if faces:
                f0 = faces[0]
                px = f0["landmarks"] * np.array([w, h, w], F32)
                sm = self.smoother.apply(px, int(timestamp_ms) * 1000)
                f0["landmarks_unsmoothed"] = f0["landmarks"]
                f0["landmarks"] = (sm / np.array([w, h, w], F32)).astype(F32)
                faces = [f0]
            else:
                self.smoother.reset()
        for f in faces:
            f["blendshapes"] = self.blendshapes(f["landmarks"], w, h)
            f["matrix"] = self.geom.pose(f["landmarks"], w, h)
        self.debug["next_rects"] = next_rects
        return faces


def iou(r1, r2):
    # association_norm_rect_calculator.cc: axis-aligned, rotation ignored
    ax0, ay0 = r1[0] - r1[2] / 2, r1[1] - r1[3] / 2
    bx0, by0 = r2[0] - r2[2] / 2, r2[1] - r2[3] / 2
    ix = max(0.0, min(ax0 + r1[2], bx0 + r2[2]) - max(ax0, bx0))
    iy = max(0.0, min(ay0 + r1[3], by0 + r2[3]) - max(ay0, by0))
    inter = ix * iy
    union = r1[2] * r1[3] + r2[2] * r2[3] - inter
    return inter / union if union > 0 else 0.0


def associate(lists, thr):
    """association_calculator.h: later elements replace earlier ones that
    overlap with IoU > thr."""
    out = []
    first = True
    for lst in lists:
        for r in lst:
            if first:
                out.append(r)
                first = False
                continue
            out = [o for o in out if not iou(r, o) > thr]
            out.append(r)
    return out


def box_iou(a, b):
    ax1, ay1 = a[0] + a[2], a[1] + a[3]
    bx1, by1 = b[0] + b[2], b[1] + b[3]
    ix = min(ax1, bx1) - max(a[0], b[0])
    iy = min(ay1, by1) - max(a[1], b[1])
    if ix < 0 or iy < 0:  # Rectangle_f::Intersects (touching counts)
        return 0.0
    inter = ix * iy
    norm = a[2] * a[3] + b[2] * b[3] - inter
    return inter / norm if norm > 0 else 0.0


def weighted_nms(dets, thr):
    """non_max_suppression_calculator.cc WeightedNonMaxSuppression
    (IoU, min_suppression_threshold thr; kept detection has the top score)."""
    order = sorted(range(len(dets)), key=lambda i: -dets[i]["score"])
    remained = order
    out = []
    while remained:
        top = dets[remained[0]]
        cand, rest = [], []
        for i in remained:
            (cand if box_iou(dets[i]["box"], top["box"]) > thr else rest).append(i)
        wd = dict(top)
        if cand:
            tot = sum(dets[i]["score"] for i in cand)
            xmin = sum(dets[i]["box"][0] * dets[i]["score"] for i in cand) / tot
            ymin = sum(dets[i]["box"][1] * dets[i]["score"] for i in cand) / tot
            xmax = sum((dets[i]["box"][0] + dets[i]["box"][2]) * dets[i]["score"] for i in cand) / tot
            ymax = sum((dets[i]["box"][1] + dets[i]["box"][3]) * dets[i]["score"] for i in cand) / tot
            kp = [(sum(dets[i]["kp"][k][0] * dets[i]["score"] for i in cand) / tot,
                   sum(dets[i]["kp"][k][1] * dets[i]["score"] for i in cand) / tot)
                  for k in range(6)]
            wd["box"] = (xmin, ymin, xmax - xmin, ymax - ymin)
            wd["kp"] = kp
        out.append(wd)
        if len(rest) == len(remained):
            break
        remained = rest
    return out


def project_detection(d, m):
    """detection_projection_calculator.cc: keypoints through the matrix, box
    corners through the matrix then axis-aligned min/max."""
    def pj(x, y):
        return (x * float(m[0]) + y * float(m[1]) + float(m[3]),
                x * float(m[4]) + y * float(m[5]) + float(m[7]))
    xmin, ymin, bw, bh = d["box"]
    pts = [pj(xmin, ymin), pj(xmin + bw, ymin), pj(xmin + bw, ymin + bh),
           pj(xmin, ymin + bh)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    out = dict(d)
    out["box"] = (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
    out["kp"] = [pj(x, y) for x, y in d["kp"]]
    return out
