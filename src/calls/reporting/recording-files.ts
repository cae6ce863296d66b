import { join } from 'node:path';
import { FileStorage } from '../../files/file-storage.js';
import type { FileDoc } from '../../control/schemas/file.js';
import type { Doc, ResourceStore } from '../../store/resource-store.js';
import type { WrittenWav } from './wav-file-writer.js';
import type { CallRecording, RecordingResult } from './call-recording.js';

/** Where a call's recordings are written: straight into the file storage of two new file ids. */
export interface RecordingTargets {
  readonly monoId: string;
  readonly stereoId: string;
  readonly monoPath: string;
  readonly stereoPath: string;
}

export function recordingTargets(
  filesDir: string,
  orgId: string,
  monoId: string,
  stereoId: string,
): RecordingTargets {
  const storage = new FileStorage(filesDir);
  return {
    monoId,
    stereoId,
    monoPath: join(storage.dir(orgId, monoId), 'original'),
    stereoPath: join(storage.dir(orgId, stereoId), 'original'),
  };
}

/** The artifact fields naming the recordings: legacy URLs and `recording {stereoUrl, mono}`. */
export interface RecordingUrls {
  readonly recordingUrl?: string;
  readonly stereoRecordingUrl?: string;
  readonly recording?: Doc;
}

/**
 * Stores the finished WAV files as file rows (status done, audio/wav), so they download through
 * `GET /file/{id}/content` like uploads; returns the URLs for the artifact.
 */
export async function storeRecordingFiles(
  files: ResourceStore,
  publicUrl: string,
  orgId: string,
  callId: string,
  targets: RecordingTargets,
  result: RecordingResult,
): Promise<RecordingUrls> {
  const durationSeconds = Math.round(result.durationMs) / 1000;
  const create = async (id: string, wav: WrittenWav, channels: 'mono' | 'stereo') => {
    const key = FileStorage.key(orgId, id);
    const doc: FileDoc = {
      object: 'file',
      status: 'done',
      name: channels === 'mono' ? 'call-recording.wav' : 'call-recording-stereo.wav',
      originalName: `call-${callId}-${channels}.wav`,
      bytes: wav.bytes,
      purpose: 'assistant',
      mimetype: 'audio/wav',
      key,
      path: key,
      bucket: 'local',
      url: `${publicUrl}/file/${id}/content`,
      metadata: {
        callId,
        recording: channels,
        sampleRate: result.sampleRateHz,
        durationSeconds,
        ...(channels === 'stereo' ? { channels: ['customer', 'assistant'] } : {}),
      },
    };
    await files.create(orgId, doc, id);
    return doc.url;
  };
  const monoUrl =
    result.mono === null ? undefined : await create(targets.monoId, result.mono, 'mono');
  const stereoUrl =
    result.stereo === null ? undefined : await create(targets.stereoId, result.stereo, 'stereo');
  const recording: Doc = {};
  if (stereoUrl !== undefined) {
    recording.stereoUrl = stereoUrl;
  }
  if (monoUrl !== undefined) {
    recording.mono = { combinedUrl: monoUrl };
  }
  return {
    ...(monoUrl !== undefined ? { recordingUrl: monoUrl } : {}),
    ...(stereoUrl !== undefined ? { stereoRecordingUrl: stereoUrl } : {}),
    ...(Object.keys(recording).length > 0 ? { recording } : {}),
  };
}

/**
 * Finishes the call's WAV files and stores them as file rows; on any failure nothing is left
 * behind (files and rows removed) and no URLs are returned.
 */
export async function finishRecording(
  recording: CallRecording,
  targets: RecordingTargets,
  where: {
    readonly files: ResourceStore;
    readonly filesDir: string;
    readonly publicUrl: string;
    readonly orgId: string;
    readonly callId: string;
  },
): Promise<RecordingUrls> {
  const { files, orgId } = where;
  try {
    const result = await recording.finish();
    return result === null
      ? {}
      : await storeRecordingFiles(files, where.publicUrl, orgId, where.callId, targets, result);
  } catch {
    await recording.discard().catch(() => undefined);
    const storage = new FileStorage(where.filesDir);
    await Promise.all([
      files.delete(orgId, targets.monoId).catch(() => null),
      files.delete(orgId, targets.stereoId).catch(() => null),
      storage.remove(orgId, targets.monoId).catch(() => undefined),
      storage.remove(orgId, targets.stereoId).catch(() => undefined),
    ]);
    return {};
  }
}
