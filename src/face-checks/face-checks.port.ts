/**
 * The server's own look at an image a verification session received. The browser runs the same
 * checks to guide the person, but its verdict is never trusted: every selfie and document image is
 * checked again here before a session may use it.
 */

/** Why a selfie (or a frame of one) was refused. */
export type SelfieProblem =
  'unreadable_image' | 'no_face' | 'several_faces' | 'face_too_small' | 'face_off_centre' | 'too_dark' | 'blurred' | 'eyes_closed' | 'spoof_suspected' | 'not_live';

/** Why a document image was refused. */
export type DocumentProblem = 'unreadable_image' | 'low_resolution' | 'document_not_framed' | 'document_too_small' | 'blurred' | 'glare' | 'no_face_on_document';

export type DocumentKind = 'passport' | 'voters_card' | 'drivers_licence_front' | 'drivers_licence_back';

export interface SelfieCheck {
  /** True when `problems` is empty. */
  readonly passed: boolean;
  readonly problems: readonly SelfieProblem[];
  readonly faces: number;
  /** The model's scores, 0 to 1, of the largest face; null when no face was found. */
  readonly detectionScore: number | null;
  readonly realScore: number | null;
  readonly liveScore: number | null;
  /** The face's description (embedding), for comparing two faces; null when no face was found. */
  readonly descriptor: readonly number[] | null;
}

export interface DocumentCheck {
  readonly passed: boolean;
  readonly problems: readonly DocumentProblem[];
  /** The description of the portrait printed on the document, when one was found. */
  readonly descriptor: readonly number[] | null;
}

/** The head's pose in one frame of a liveness step, for judging the step across frames (face-measures.ts's livenessStep). */
export interface FramePose {
  /** The head's yaw, radians; null without a mesh. */
  readonly yawRad: number | null;
  /** The less open eye's lid gap over its height; null without a mesh. */
  readonly eyeOpenness: number | null;
}

export abstract class FaceChecks {
  /** Checks one image (JPEG or PNG bytes) as a selfie. */
  abstract checkSelfie(image: Uint8Array): Promise<SelfieCheck>;
  /** Checks one image (JPEG or PNG bytes) as a page or side of a document. */
  abstract checkDocument(image: Uint8Array, kind: DocumentKind): Promise<DocumentCheck>;
  /**
   * The pose of the largest face in one frame (JPEG or PNG bytes) of a liveness step, with its description (to
   * tell whether the frame shows the selfie's person); null when unreadable or without a face.
   */
  abstract framePose(image: Uint8Array): Promise<(FramePose & { readonly faces: number; readonly descriptor: readonly number[] | null }) | null>;
  /** How alike two faces are, 0 (unlike) to 1 (the same image). */
  abstract similarity(a: readonly number[], b: readonly number[]): number;
}
