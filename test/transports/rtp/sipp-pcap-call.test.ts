import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasSipp, runSipp, SIPP_PCAP_DIR } from '../../support/sipp.js';
import { RtpTestUas } from './support/rtp-test-uas.js';

/** Runs SIPp's built-in uac_pcap scenario once against the UAS; resolves with its exit code. */
function runUacPcap(port: number, workDir: string, mediaPort: number) {
  const args = [
    ...['-sn', 'uac_pcap', '-i', '127.0.0.1', '-mi', '127.0.0.1', '-mp', String(mediaPort)],
    ...['-m', '1', '-l', '1', '-nostdin', '-timeout', '40s', '-timeout_error', '-trace_err'],
    `127.0.0.1:${port}`,
  ];
  return runSipp(args, workDir);
}

describe.skipIf(!hasSipp)('SIPp uac_pcap call to a UAS on the dialog layer and RtpSession', () => {
  let uas: RtpTestUas;
  let workDir: string;

  beforeAll(async () => {
    uas = await RtpTestUas.start(46_000 + 100 * Math.floor(Math.random() * 40));
    // The scenario plays pcap/g711a.pcap and pcap/dtmf_2833_1.pcap relative to its directory.
    workDir = mkdtempSync(join(tmpdir(), 'parla-sipp-rtp-'));
    mkdirSync(join(workDir, 'pcap'));
    for (const name of ['g711a.pcap', 'dtmf_2833_1.pcap']) {
      symlinkSync(join(SIPP_PCAP_DIR, name), join(workDir, 'pcap', name));
    }
  });

  afterAll(async () => {
    await uas.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('receives the G.711 A-law pcap through the jitter buffer, echoes it and decodes the DTMF', async () => {
    const mediaPort = 50_000 + 2 * Math.floor(Math.random() * 2000);
    const result = await runUacPcap(uas.port, workDir, mediaPort);
    expect(result.code, result.output).toBe(0);
    await uas.waitForCalls(1);
    const call = uas.calls[0]!;
    expect(call.codec).toBe('PCMA');
    expect(call.endReason).toBe('remote-bye');
    expect(call.latched).toBe(true);
    // g711a.pcap holds 236 packets of 30 ms: 354 frames of 20 ms. Allow for frames still in
    // the jitter buffer at the BYE and a few late ones on a loaded machine.
    expect(call.audioFrames).toBeGreaterThan(300);
    expect(call.audioFrames).toBeLessThanOrEqual(354);
    expect(call.packetsSent).toBeGreaterThan(300);
    expect(call.digits).toEqual(['1']);
  }, 60_000);
});
