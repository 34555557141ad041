import sys, numpy as np, os
sys.path.insert(0,'scripts/reference')
import media
from mpface import FaceLandmarkerPy
R='testdata/reference/mediapipe'
for name in media.VIDEOS + media.IMAGES + ["Image_with_alpha.png"]:
    g=np.load(f"{R}/{media.npz_name(name)}")
    video = str(g['mode'])=='VIDEO'
    fl=FaceLandmarkerPy('models', running_mode='VIDEO' if video else 'IMAGE', num_faces=1)
    agree=0; dxy=[]; dbs=[]; dm=[]
    it = media.iter_video(os.path.join(media.DATA,name)) if video else [(0, media.decode_image(os.path.join(media.DATA,name)), 0)]
    for i, fr, ts in it:
        assert media.md5(fr)==g['frame_md5'][i] and ts==g['timestamp_ms'][i]
        faces=fl.process(fr, ts)
        found=len(faces)>0
        agree += found==bool(g['face_found'][i])
        if found and g['face_found'][i]:
            w,h=fr.shape[1],fr.shape[0]
            d=(faces[0]['landmarks'][:,:2]-g['landmarks'][i,0,:,:2])*[w,h]
            dxy.append(np.abs(d).max()); dbs.append(np.abs(faces[0]['blendshapes']-g['blendshapes'][i,0]).max()); dm.append(np.abs(faces[0]['matrix']-g['matrix'][i,0]).max())
    n=len(g['frame_index'])
    print(f"{name}: agree {agree}/{n}", f"max|dxy| {max(dxy):.3f}px med {np.median(dxy):.3f} max|dbs| {max(dbs):.2e} max|dM| {max(dm):.2e}" if dxy else "")
